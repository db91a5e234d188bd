import Foundation

/// One delivery attempt of a notification (Apple's `SendAttemptItem`, plus the HTTP status seen).
struct SimSendAttempt: Sendable, Codable, Hashable {
    var attemptDate: Int64
    /// Apple's `SendAttemptResult`: `SUCCESS`, `TIMED_OUT`, `UNSUCCESSFUL_HTTP_RESPONSE_CODE`, `NO_RESPONSE`,
    /// `SOCKET_ISSUE`, `OTHER`.
    var sendAttemptResult: String
    var httpStatus: Int?
}
