import Core
import Foundation
import Metrics

/// The exporter's metrics (docs/EXPORT.md): events written, skipped and refused, time waiting for PostgreSQL, and how
/// far behind the ledger the export is (an event's write time minus the time the ledger applied it).
package struct ExportMetrics: Sendable {
    private let written = Counter(label: "tollgate_export_events_total", dimensions: [("outcome", "written")])
    private let skippedCounter = Counter(label: "tollgate_export_events_total", dimensions: [("outcome", "skipped")])
    private let failedCounter = Counter(label: "tollgate_export_events_total", dimensions: [("outcome", "dead_letter")])
    private let unavailableCounter = Counter(label: "tollgate_export_postgres_unavailable_total")
    private let duration = Timer(label: "tollgate_export_write_seconds")
    private let lag = Timer(label: "tollgate_export_lag_seconds")

    package init() {}

    func skipped() { skippedCounter.increment() }
    func failed() { failedCounter.increment() }
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
