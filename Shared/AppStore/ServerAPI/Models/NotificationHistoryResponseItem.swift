/// One past notification and its delivery attempts: Apple's `NotificationHistoryResponseItem`.
public struct NotificationHistoryResponseItem: Codable, Sendable, Hashable {
    /// The V2 notification as a JWS (`signedPayload`), not yet verified.
    public var signedPayload: String?
    public var sendAttempts: [SendAttemptItem]?

    public init(signedPayload: String? = nil, sendAttempts: [SendAttemptItem]? = nil) {
        self.signedPayload = signedPayload
        self.sendAttempts = sendAttempts
    }
}
