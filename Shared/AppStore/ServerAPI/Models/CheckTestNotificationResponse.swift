/// The answer of Get Test Notification Status: Apple's `CheckTestNotificationResponse`.
package struct CheckTestNotificationResponse: Codable, Sendable, Hashable {
    /// The test notification as a JWS, not yet verified.
    package var signedPayload: String?
    package var sendAttempts: [SendAttemptItem]?

    package init(signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
