import AppStore
import Foundation

/// A notification as `/sim/notifications` shows it.
struct NotificationView: Encodable {
    var notificationUUID: String
    var notificationType: String
    var subtype: String?
    var environment: String
    var transactionId: String?
    var originalTransactionId: String?
    var deliveryStatus: String
    var sendAttempts: [SimSendAttempt]
    var signedPayload: String

    init(_ notification: SimNotification) {
        notificationUUID = notification.notificationUUID
        notificationType = notification.type.rawValue
        subtype = notification.subtype?.rawValue
        environment = notification.environment.rawValue
        transactionId = notification.transactionId
        originalTransactionId = notification.originalTransactionId
        deliveryStatus = notification.delivery.rawValue
        sendAttempts = notification.attempts
        signedPayload = notification.signedPayload
    }
}
