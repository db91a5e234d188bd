/// What a notification said, in a ``PurchaseEvent`` of a notification job.
///
/// JSON fields:
/// - `type` — Apple's notification type as sent: V2 `notificationType` (`DID_RENEW`, `REFUND`, …) or V1
///   `notification_type` (`DID_RENEW`, `CANCEL`, …); see `version`.
/// - `subtype` — V2 `subtype` (`INITIAL_BUY`, `VOLUNTARY`, …), when present.
/// - `notificationUUID` — V2 only: Apple's id of the notification (the same across Apple's retries).
/// - `signedDate` — V2 only: when Apple signed it, milliseconds since 1970.
/// - `version` — `2` for App Store Server Notifications V2, `1` for V1.
public struct PurchaseEventNotification: Codable, Sendable, Hashable {
    public var type: String
    public var subtype: String?
    public var notificationUUID: String?
    public var signedDate: Int64?
    public var version: Int

    public init(type: String, subtype: String? = nil, notificationUUID: String? = nil, signedDate: Int64? = nil, version: Int) {
        self.type = type
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.signedDate = signedDate
        self.version = version
    }
}
