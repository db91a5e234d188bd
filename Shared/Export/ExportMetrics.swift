import Core
import Foundation
import Metrics
package import Pipeline

/// The exporter's metrics (docs/EXPORT.md): events written, skipped and refused, time waiting for PostgreSQL, and how
/// far behind the ledger the export is (an event's write time minus the time the ledger applied it).
package struct ExportMetrics: Sendable {
    private let written: CoreMetrics.Counter
    private let skippedCounter: CoreMetrics.Counter
    private let failedCounter: CoreMetrics.Counter
    private let unavailableCounter: CoreMetrics.Counter
    private let duration: CoreMetrics.Timer
    private let lag: CoreMetrics.Timer

    /// Recorded through `handles`: the exporter's registry, handed in by its builder.
    package init(handles: MetricHandles = MetricHandles()) {
        written = handles.counter("tollgate_export_events_total", [("outcome", "written")])
        skippedCounter = handles.counter("tollgate_export_events_total", [("outcome", "skipped")])
        failedCounter = handles.counter("tollgate_export_events_total", [("outcome", "dead_letter")])
        unavailableCounter = handles.counter("tollgate_export_postgres_unavailable_total")
        duration = handles.timer("tollgate_export_write_seconds")
        lag = handles.timer("tollgate_export_lag_seconds")
    }

    func skipped() { skippedCounter.increment() }
    func failed() { failedCounter.increment() }
    /// An attempt that found PostgreSQL (or Redis) unreachable, or a write still not done after a heartbeat interval
    /// (and after each further one it waits).
    func unavailable() { unavailableCounter.increment() }

    func exported(_ event: ExportEvent, after elapsed: Duration) {
        written.increment()
        duration.recordNanoseconds(elapsed.nanoseconds)
        if let at = UTCTime.milliseconds(iso8601: event.at) {
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            lag.recordNanoseconds(max(0, now - at) * 1_000_000)
        }
    }
}
