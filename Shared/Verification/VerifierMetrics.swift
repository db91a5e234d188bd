package import AppStore
import Metrics
package import Pipeline

/// The verifier's own metrics (the consumer runtime adds `tollgate_jobs_total{stream,outcome}`,
/// `tollgate_retries_scheduled_total{stream}`, `tollgate_dead_letters_total{stream,cause}`):
///
/// - `tollgate_verifier_jobs_total{kind,outcome}` — outcome: verified, recorded, rejected, retryable, malformed
/// - `tollgate_verifier_retries_total{kind,code}` — retries scheduled, by failure code
/// - `tollgate_verifier_dead_letters_total{kind}`
/// - `tollgate_apple_requests_total{endpoint,status}` and `tollgate_apple_request_duration_seconds{endpoint}`
///   — endpoint: `verifyReceipt`, `api`; status: the HTTP status or the transport error code
/// - `tollgate_chain_cache_hits`, `tollgate_chain_cache_misses`, `tollgate_chain_cache_hit_ratio` (gauges,
///   refreshed on each scrape)
/// - `tollgate_reconcile_notifications_recovered_total{environment}` — notifications the reconciler enqueued
/// - `tollgate_reconcile_subscriptions_corrected_total{environment}` — sweeper answers that changed the ledger
/// - `tollgate_reconcile_passes_total{outcome}` — outcome: success, failure
/// - `tollgate_reconcile_last_success_timestamp_seconds` — when the last pass by this replica succeeded
package struct VerifierMetrics: Sendable {
    /// Where they are recorded: the verifier's registry, handed in by its builder.
    let handles: MetricHandles

    package init(handles: MetricHandles = MetricHandles()) {
        self.handles = handles
    }

    package func job(kind: String, outcome: String) {
        handles.counter("tollgate_verifier_jobs_total", [("kind", kind), ("outcome", outcome)]).increment()
    }

    package func retryScheduled(kind: String, code: String) {
        handles.counter("tollgate_verifier_retries_total", [("kind", kind), ("code", code)]).increment()
    }

    package func deadLetter(kind: String) {
        handles.counter("tollgate_verifier_dead_letters_total", [("kind", kind)]).increment()
    }

    package func appleRequest(endpoint: String, status: String, duration: Duration) {
        handles.counter("tollgate_apple_requests_total", [("endpoint", endpoint), ("status", status)]).increment()
        let (seconds, attoseconds) = duration.components
        handles.timer("tollgate_apple_request_duration_seconds", [("endpoint", endpoint)])
            .recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    package func chainCache(_ statistics: ChainCache.Statistics) {
        handles.gauge("tollgate_chain_cache_hits").record(statistics.hits)
        handles.gauge("tollgate_chain_cache_misses").record(statistics.misses)
        let total = statistics.hits + statistics.misses
        handles.gauge("tollgate_chain_cache_hit_ratio").record(total == 0 ? 0 : Double(statistics.hits) / Double(total))
    }

    package func notificationRecovered(environment: String) {
        handles.counter("tollgate_reconcile_notifications_recovered_total", [("environment", environment)]).increment()
    }

    package func subscriptionCorrected(environment: String) {
        handles.counter("tollgate_reconcile_subscriptions_corrected_total", [("environment", environment)]).increment()
    }

    package func reconcilePass(succeeded: Bool, atMilliseconds: Int64) {
        handles.counter("tollgate_reconcile_passes_total", [("outcome", succeeded ? "success" : "failure")]).increment()
        if succeeded {
            handles.gauge("tollgate_reconcile_last_success_timestamp_seconds").record(Double(atMilliseconds) / 1000)
        }
    }
}
