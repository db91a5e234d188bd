import Foundation

/// The body of Get Notification History: Apple's `NotificationHistoryRequest`. Apple keeps 180 days of
/// history; `startDate` must be before `endDate`.
public struct NotificationHistoryRequest: Sendable, Hashable, Encodable {
    public var startDate: Date
    public var endDate: Date
    /// Only notifications of this type (Apple's `notificationType`).
    public var notificationType: NotificationTypeV2?
    public var notificationSubtype: NotificationSubtype?
    /// Only notifications whose delivery to the server failed.
    public var onlyFailures: Bool?
    /// Only notifications about this transaction's customer.
    public var transactionId: String?

    public init(
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

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(TransactionHistoryQuery.millis(startDate), forKey: .startDate)
        try container.encode(TransactionHistoryQuery.millis(endDate), forKey: .endDate)
        try container.encodeIfPresent(notificationType?.rawValue, forKey: .notificationType)
        try container.encodeIfPresent(notificationSubtype?.rawValue, forKey: .notificationSubtype)
        try container.encodeIfPresent(onlyFailures, forKey: .onlyFailures)
        try container.encodeIfPresent(transactionId, forKey: .transactionId)
    }
}
