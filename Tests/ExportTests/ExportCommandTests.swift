import Export
import Foundation
import Ledger
import PostgresNIO
import TestSupport
import Testing

/// `tollctl export` and `tollctl audit --export`, the real executable against a real redis-server and PostgreSQL.
@Suite(.serialized) struct ExportCommandTests {
    @Test func exportFillsTheDatabaseAndTheAuditSaysWhetherItAgrees() async throws {
        try await ExportRig.with(partitions: 2) { rig in
            let sale = Sale.coins("c1")
            try await rig.apply(Fixture.client("alice", [sale], environment: "Production"))
            try await rig.apply(Fixture.notification("REFUND", [Sale.refund(sale)]))
            try await rig.apply(Fixture.client("bob", [Sale.coins("c2", quantity: 3)], environment: "Production"))
            let environment = [
                "TOLLGATE_REDIS_URL": rig.ledger.server.url, "TOLLGATE_PARTITIONS": "2", "TOLLGATE_POSTGRES_URL": rig.postgres.url,
            ]

            let empty = try await ChildProcess.run("tollctl", arguments: ["audit", "--export"], environment: environment)
            #expect(empty.status == 1)
            #expect(empty.output.contains("user alice: no row"))

            let export = try await ChildProcess.run("tollctl", arguments: ["export", "--since", "2020-01-01"], environment: environment)
            #expect(export.status == 0, "\(export.output)")
            #expect(export.output.contains("users=2 transactions=2"))
            let audit = try await ChildProcess.run("tollctl", arguments: ["audit", "--export"], environment: environment)
            #expect(audit.status == 0, "\(audit.output)")
            #expect(audit.output.contains("export audit: 0 differences"))

            try await rig.client.perform("UPDATE transactions SET state = 'applied' WHERE transaction_id = 'c1'", logger: testLogger)
            let tampered = try await ChildProcess.run("tollctl", arguments: ["audit", "--export"], environment: environment)
            #expect(tampered.status == 1)
            #expect(tampered.output.contains("transaction c1 (user alice): state differ"))
            #expect(tampered.output.contains("export audit: 1 differences"))

            let bad = try await ChildProcess.run("tollctl", arguments: ["export", "--since", "yesterday"], environment: environment)
            #expect(bad.status != 0)
            #expect(bad.output.contains("--since must be a day"))
        }
    }
}
