import AppStore
import Foundation

/// A V2 notification the simulator sent (or tried to), with every send attempt, for Notification
/// History and `/sim/notifications`.
struct SimNotification: Sendable {
    /// Where delivery stands.
    enum Delivery: String, Sendable, Codable {
        /// `SIM_NOTIFY_URL` is not set: recorded only.
        case disabled
        /// Waiting for its first or next attempt.
        case pending
        case delivered
        /// Every attempt of Apple's schedule failed.
        case failed
    }

    var notificationUUID: String
    var type: NotificationTypeV2
    var subtype: NotificationSubtype?
    var signedPayload: String
    var signedDate: Int64
    var environment: AppStoreEnvironment
    var bundleId: String
    var transactionId: String?
    var originalTransactionId: String?
    var attempts: [SimSendAttempt] = []
    var delivery: Delivery
    /// Set for notifications made by Request a Test Notification.
    var testNotificationToken: String?
}
