import Foundation

/// The body of Get Notification History: Apple's `NotificationHistoryRequest`. Apple keeps 180 days of
/// history; `startDate` must be before `endDate`.
package struct NotificationHistoryRequest: Sendable, Hashable, Encodable {
    package var startDate: Date
    package var endDate: Date
    /// Only notifications of this type (Apple's `notificationType`).
    package var notificationType: NotificationTypeV2?
    package var notificationSubtype: NotificationSubtype?
    /// Only notifications whose delivery to the server failed.
    package var onlyFailures: Bool?
    /// Only notifications about this transaction's customer.
    package var transactionId: String?

    package init(
        startDate: Date, endDate: Date, notificationType: NotificationTypeV2? = nil,
        notificationSubtype: NotificationSubtype? = nil, onlyFailures: Bool? = nil, transactionId: String? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.onlyFailures = onlyFailures
        self.transactionId = transactionId
    }

    enum CodingKeys: String, CodingKey {
        case startDate, endDate, notificationType, notificationSubtype, onlyFailures, transactionId
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(TransactionHistoryQuery.millis(startDate), forKey: .startDate)
        try container.encode(TransactionHistoryQuery.millis(endDate), forKey: .endDate)
        try container.encodeIfPresent(notificationType?.rawValue, forKey: .notificationType)
        try container.encodeIfPresent(notificationSubtype?.rawValue, forKey: .notificationSubtype)
        try container.encodeIfPresent(onlyFailures, forKey: .onlyFailures)
        try container.encodeIfPresent(transactionId, forKey: .transactionId)
    }
}
