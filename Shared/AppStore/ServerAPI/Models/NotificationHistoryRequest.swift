package import Foundation

/// The body of Get Notification History: Apple's `NotificationHistoryRequest`. Apple keeps 180 days of
/// history; `startDate` must be before `endDate`. Dates travel as milliseconds since 1970. The client encodes it;
/// the simulator (appstore-sim) decodes it.
package struct NotificationHistoryRequest: Sendable, Hashable, Codable {
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

    package enum CodingKeys: String, CodingKey {
        case startDate, endDate, notificationType, notificationSubtype, onlyFailures, transactionId
    }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        startDate = Date(timeIntervalSince1970: Double(try container.decode(Int64.self, forKey: .startDate)) / 1000)
        endDate = Date(timeIntervalSince1970: Double(try container.decode(Int64.self, forKey: .endDate)) / 1000)
        notificationType = try container.decodeIfPresent(NotificationTypeV2.self, forKey: .notificationType)
        notificationSubtype = try container.decodeIfPresent(NotificationSubtype.self, forKey: .notificationSubtype)
        onlyFailures = try container.decodeIfPresent(Bool.self, forKey: .onlyFailures)
        transactionId = try container.decodeIfPresent(String.self, forKey: .transactionId)
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
