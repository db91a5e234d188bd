import Core
import CoreMetrics
import Pipeline
import Prometheus

/// Ingest's metrics, on the registry its builder is given (a new one by default, so that tests can build several apps in
/// one process), exported
/// as Prometheus text on `/metrics`:
/// - `tollgate_ingest_requests_total{route,status}` — answered requests
/// - `tollgate_ingest_request_duration_seconds{route}` — latency histogram
/// - `tollgate_ingest_enqueue_batch_size` — jobs per pipelined Redis round trip (histogram)
/// - `tollgate_ingest_rejects_total{reason}` — refused requests by error code
/// - `tollgate_ingest_jobs_total{kind,outcome}` — jobs enqueued (`created`) or deduplicated (`duplicate`)
/// - `tollgate_ingest_backlog` — last sampled undelivered jobs on the jobs stream
/// - `tollgate_ingest_source_backlog_jobs{source}`, `tollgate_ingest_source_backlog_bytes{source}` — each source's
///   unfinished jobs and payload bytes (what its budget is checked against): `apple`, `client`, and `service` (service
///   keys' calls that ask Apple)
struct IngestMetrics: Sendable {
    let registry: PrometheusCollectorRegistry
    let factory: PrometheusMetricsFactory
    /// The per-request and per-job handles, made once each.
    let handles: MetricHandles
    let batchSize: CoreMetrics.Recorder
    let backlog: CoreMetrics.Gauge

    init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.valueHistogramBuckets["tollgate_ingest_enqueue_batch_size"] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
        factory.durationHistogramBuckets["tollgate_ingest_request_duration_seconds"] = [
            .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
            .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250),
            .milliseconds(500), .seconds(1), .seconds(5), .seconds(30),
        ]
        self.factory = factory
        handles = MetricHandles(factory: factory)
        batchSize = CoreMetrics.Recorder(label: "tollgate_ingest_enqueue_batch_size", dimensions: [], aggregate: true, factory: factory)
        backlog = CoreMetrics.Gauge(label: "tollgate_ingest_backlog", dimensions: [], factory: factory)
    }

    func request(route: String, status: Int, duration: Duration) {
        handles.counter("tollgate_ingest_requests_total", [("route", route), ("status", String(status))]).increment()
        handles.timer("tollgate_ingest_request_duration_seconds", [("route", route)]).recordNanoseconds(duration.nanoseconds)
    }

    func sourceBacklog(_ source: String, jobs: Int, bytes: Int) {
        CoreMetrics.Gauge(label: "tollgate_ingest_source_backlog_jobs", dimensions: [("source", source)], factory: factory)
            .record(jobs)
        CoreMetrics.Gauge(label: "tollgate_ingest_source_backlog_bytes", dimensions: [("source", source)], factory: factory)
            .record(bytes)
    }

    func reject(reason: String) {
        CoreMetrics.Counter(label: "tollgate_ingest_rejects_total", dimensions: [("reason", reason)], factory: factory).increment()
    }

    func job(kind: String, created: Bool) {
        handles.counter("tollgate_ingest_jobs_total", [("kind", kind), ("outcome", created ? "created" : "duplicate")])
            .increment()
    }

    /// The Prometheus text exposition.
    func render() -> [UInt8] { registry.emitToBuffer() }
}
