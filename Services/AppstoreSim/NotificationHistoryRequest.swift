import Foundation

/// The body of Get Notification History.
struct NotificationHistoryRequest: Decodable, Sendable {
    var startDate: Int64?
    var endDate: Int64?
    var notificationType: String?
    var notificationSubtype: String?
    var transactionId: String?
    var onlyFailures: Bool?
}
