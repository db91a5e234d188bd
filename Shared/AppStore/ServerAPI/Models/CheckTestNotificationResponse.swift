/// The answer of Get Test Notification Status: Apple's `CheckTestNotificationResponse`.
public struct CheckTestNotificationResponse: Codable, Sendable, Hashable {
    /// The test notification as a JWS, not yet verified.
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]?

    public init(signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
