/// What a notification said, in a ``PurchaseEvent`` of a notification job.
///
/// JSON fields:
/// - `type` — Apple's notification type as sent: V2 `notificationType` (`DID_RENEW`, `REFUND`, …) or V1
///   `notification_type` (`DID_RENEW`, `CANCEL`, …); see `version`.
/// - `subtype` — V2 `subtype` (`INITIAL_BUY`, `VOLUNTARY`, …), when present.
/// - `notificationUUID` — V2 only: Apple's id of the notification (the same across Apple's retries).
/// - `signedDate` — V2 only: when Apple signed it, milliseconds since 1970.
/// - `version` — `2` for App Store Server Notifications V2, `1` for V1.
/// - `appTransactionId` — V2 `RESCIND_CONSENT` (`appData`): the verified app transaction's `appTransactionId`,
///   Apple's id of the customer's download of the app whose consent was rescinded.
package struct PurchaseEventNotification: Codable, Sendable, Hashable {
    package var type: String
    package var subtype: String?
    package var notificationUUID: String?
    package var signedDate: Int64?
    package var version: Int
    package var appTransactionId: String?

    package init(
        type: String, subtype: String? = nil, notificationUUID: String? = nil, signedDate: Int64? = nil, version: Int,
        appTransactionId: String? = nil
    ) {
        self.type = type
        self.subtype = subtype
        self.notificationUUID = notificationUUID
        self.signedDate = signedDate
        self.version = version
        self.appTransactionId = appTransactionId
    }
}
