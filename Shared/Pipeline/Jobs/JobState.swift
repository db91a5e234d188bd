/// Where a job is in the pipeline, as `GET /v1/jobs/{id}` reports it.
package enum JobState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Durably enqueued by ingest, not yet picked up.
    case queued
    /// A verifier holds it (calling Apple, checking signatures).
    case verifying
    /// A retryable failure (Apple unavailable, rate limited …); scheduled again at `nextAttemptAt`.
    case retrying
    /// Verified and applied to the ledger (or recorded, for notifications that change nothing).
    case fulfilled
    /// Permanently refused, with a stable reason code.
    case rejected
    /// Retries exhausted or a poison entry; in the dead-letter stream for an operator.
    case dead

    /// True when the job will not change state again by itself.
    package var isFinal: Bool {
        switch self {
        case .fulfilled, .rejected, .dead: return true
        case .queued, .verifying, .retrying: return false
        }
    }
}
