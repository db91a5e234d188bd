import Export
import Foundation
import Ledger
import Logging
import Pipeline
import Prometheus
import TestSupport
import Testing

/// A PostgreSQL that does not answer (docs/EXPORT.md, "Faults"): issue 42 item 10.
@Suite(.serialized) struct ExportWaitingTests {
    /// PostgreSQL stopped while the exporter has work: its write waits in the client, and within the heartbeat
    /// interval that wait is counted (`tollgate_export_postgres_unavailable_total`) and logged; once it is back the
    /// entry is written.
    @Test func aWriteWaitingForAStoppedPostgreSQLIsCountedAndLogged() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let registry = PrometheusCollectorRegistry()
            let lines = RecordedLines()
            let logger = Logger(label: "exporter-test") { _ in RecordingLogHandler(sink: lines) }
            // A claim time of 1.5 s: a heartbeat every 0.5 s.
            let exporter = try await rig.exporter(
                consumer: "e1", claimMinIdle: .milliseconds(1500), registry: registry, logger: logger)
            try await rig.apply(Fixture.client("alice", [Sale.coins("c1")]))
            #expect(try await eventually(timeout: .seconds(30)) { try await rig.drained() })
            #expect(Self.unavailable(registry) == 0)

            try await rig.postgres.stop()
            try await rig.apply(Fixture.client("alice", [Sale.coins("c2")]))
            let counted = await eventually(timeout: .seconds(15)) { Self.unavailable(registry) >= 2 }
            #expect(counted, "unavailable_total = \(Self.unavailable(registry)) while a write waits")
            #expect(lines.all.contains { $0.message.contains("waiting") && $0.metadata["export"] != nil }, "\(lines.all)")

            try await rig.postgres.start()
            #expect(try await eventually(timeout: .seconds(60)) { try await rig.drained() })
            try await exporter.shutdown()
            #expect(try await rig.number("SELECT count(*) FROM events") == 2)
        }
    }

    static func unavailable(_ registry: PrometheusCollectorRegistry) -> Int {
        let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
        let line = text.split(separator: "\n").first { $0.hasPrefix("tollgate_export_postgres_unavailable_total ") }
        return line.flatMap { Double($0.split(separator: " ").last ?? "") }.map { Int($0) } ?? 0
    }
}
