import Metrics
package import Pipeline

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
/// - `tollgate_webhook_dead_dropped_total{endpoint}` — old dead letters the cap (`TOLLGATE_WEBHOOK_DEAD_MAX` per
///   partition) dropped to make room: gone from `tollctl webhooks dead|redrive` (each user's event log, `GET
///   /v1/users/{userId}/events`, still has them)
package struct WebhookMetrics: Sendable {
    /// Where they are recorded: the notifier's registry, handed in by its builder.
    let handles: MetricHandles

    package init(handles: MetricHandles = MetricHandles()) {
        self.handles = handles
    }

    func outcome(_ endpoint: String, _ outcome: String, count: Int = 1) {
        handles.counter("tollgate_webhook_deliveries_total", [("endpoint", endpoint), ("outcome", outcome)])
            .increment(by: count)
    }

    func latency(_ endpoint: String, milliseconds: Int64) {
        handles.timer("tollgate_webhook_latency_seconds", [("endpoint", endpoint)])
            .recordNanoseconds(max(0, milliseconds) * 1_000_000)
    }

    func oldestUndelivered(_ endpoint: String, seconds: Double) {
        handles.gauge("tollgate_webhook_oldest_undelivered_seconds", [("endpoint", endpoint)]).record(seconds)
    }

    func breaker(_ endpoint: String, open: Bool) {
        handles.gauge("tollgate_webhook_breaker_open", [("endpoint", endpoint)]).record(open ? 1 : 0)
    }

    func deadDropped(_ endpoint: String, _ count: Int) {
        guard count > 0 else { return }
        handles.counter("tollgate_webhook_dead_dropped_total", [("endpoint", endpoint)]).increment(by: count)
    }

    func replicas(_ endpoint: String, _ count: Int) {
        handles.gauge("tollgate_webhook_replicas", [("endpoint", endpoint)]).record(count)
    }
}
