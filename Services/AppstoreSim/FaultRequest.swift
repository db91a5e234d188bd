import Foundation

/// `POST /sim/faults`: make some of the next calls to one part of the simulator fail or slow down.
struct FaultRequest: Decodable, Sendable {
    /// `verifyReceipt`, `api` or `notifications`.
    var target: String
    /// `verifyReceipt`: an Apple status (21000-21199, answered with HTTP 200) or an HTTP status
    /// (400-599). `api`: an HTTP status. `notifications`: the attempt is not sent and is recorded as
    /// failed with this HTTP status.
    var status: Int?
    /// Wait this long before answering (or before sending a notification).
    var delayMs: Int?
    /// How many calls the fault applies to; unset, until `DELETE /sim/faults`.
    var times: Int?
    /// The share of calls (0-1] the fault applies to; unset, every call.
    var rate: Double?
    /// Seconds in the `Retry-After` header of a 429 (default 1).
    var retryAfter: Int?
    /// Only calls to this environment (`Production` or `Sandbox`).
    var environment: String?
    /// `api`: Apple's `errorCode` in the error body (default: Apple's for the status, e.g. `4040006` with 404 for
    /// `OriginalTransactionIdNotFoundRetryableError`).
    var errorCode: Int?
}
