import Metrics
import Pipeline

/// The notifier's metrics:
///
/// - `tollgate_webhook_deliveries_total{endpoint,outcome}` — delivered, failed, dead, skipped (type filtered out),
///   malformed
/// - `tollgate_webhook_latency_seconds{endpoint}` — from the ledger's write of the event (its entry id) to the 2xx
/// - `tollgate_webhook_oldest_undelivered_seconds{endpoint}` — age of the oldest entry the endpoint has not finished
///   (every partition; 0 when none)
/// - `tollgate_webhook_breaker_open{endpoint}` — 1 while the endpoint's breaker is open in this replica (its own
///   opening, or one another replica published)
/// - `tollgate_webhook_replicas{endpoint}` — the endpoint's replicas alive, as this replica last learned
package struct WebhookMetrics: Sendable {
    package init() {}

    func outcome(_ endpoint: String, _ outcome: String) {
        MetricHandles.shared.counter("tollgate_webhook_deliveries_total", [("endpoint", endpoint), ("outcome", outcome)])
            .increment()
    }

    func latency(_ endpoint: String, milliseconds: Int64) {
        MetricHandles.shared.timer("tollgate_webhook_latency_seconds", [("endpoint", endpoint)])
            .recordNanoseconds(max(0, milliseconds) * 1_000_000)
    }

    func oldestUndelivered(_ endpoint: String, seconds: Double) {
        Gauge(label: "tollgate_webhook_oldest_undelivered_seconds", dimensions: [("endpoint", endpoint)]).record(seconds)
    }

    func breaker(_ endpoint: String, open: Bool) {
        Gauge(label: "tollgate_webhook_breaker_open", dimensions: [("endpoint", endpoint)]).record(open ? 1 : 0)
    }

    func replicas(_ endpoint: String, _ count: Int) {
        Gauge(label: "tollgate_webhook_replicas", dimensions: [("endpoint", endpoint)]).record(count)
    }
}
