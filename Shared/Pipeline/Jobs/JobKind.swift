/// What a job carries, and so how the verifier checks it.
package enum JobKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A legacy app receipt (base64), checked with Apple's `verifyReceipt`.
    case receipt
    /// A StoreKit 2 signed transaction (JWS).
    case transaction
    /// An App Store Server Notification V2 body (`{"signedPayload": "<JWS>"}`).
    case notificationV2 = "notification.v2"
    /// An App Store Server Notification V1 body (JSON with `notification_type`, `unified_receipt`).
    case notificationV1 = "notification.v1"
    /// An operator's call of Apple's API made over HTTP by a service key with `admin` or `read` (``OperatorCall``):
    /// the verifier makes it, as it makes every call to Apple, and the job's result is Apple's answer.
    case operatorCall = "operator"
}
