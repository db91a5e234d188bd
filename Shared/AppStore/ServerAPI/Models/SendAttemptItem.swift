/// One attempt to deliver a notification: Apple's `SendAttemptItem`.
package struct SendAttemptItem: Codable, Sendable, Hashable {
    /// Milliseconds since 1970.
    package var attemptDate: Int64?
    /// Apple's `sendAttemptResult`, e.g. `SUCCESS`, `TIMED_OUT`, `SSL_ISSUE`.
    package var sendAttemptResult: String?

    package init(attemptDate: Int64? = nil, sendAttemptResult: String? = nil) {
        self.attemptDate = attemptDate
        self.sendAttemptResult = sendAttemptResult
    }
}
