/// One attempt to deliver a notification: Apple's `SendAttemptItem`.
public struct SendAttemptItem: Codable, Sendable, Hashable {
    /// Milliseconds since 1970.
    public var attemptDate: Int64?
    /// Apple's `sendAttemptResult`, e.g. `SUCCESS`, `TIMED_OUT`, `SSL_ISSUE`.
    public var sendAttemptResult: String?

    public init(attemptDate: Int64? = nil, sendAttemptResult: String? = nil) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}
