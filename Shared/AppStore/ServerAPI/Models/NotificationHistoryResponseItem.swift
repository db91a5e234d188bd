/// One past notification and its delivery attempts: Apple's `NotificationHistoryResponseItem`.
package struct NotificationHistoryResponseItem: Codable, Sendable, Hashable {
    /// The V2 notification as a JWS (`signedPayload`), not yet verified.
    package var signedPayload: String?
    package var sendAttempts: [SendAttemptItem]?

    package init(signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
