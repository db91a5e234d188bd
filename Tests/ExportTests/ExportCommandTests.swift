import Export
import Foundation
import Ledger
import Pipeline
import PostgresNIO
import Redis
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

    /// What PostgreSQL refuses whatever is done to it (an event whose time is none) is skipped: `tollctl export` writes
    /// everything else — a reason with a NUL escaped — lists what it skipped, and exits 1.
    @Test func exportSkipsWhatItCannotWriteListsItAndExitsNonZero() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let (redis, keys) = (rig.ledger.redis, rig.ledger.keys)
            try await rig.apply(Fixture.client("alice", [Sale.coins("c1")], environment: "Production"))
            let bad = #"{"id":"evt_bad","type":"app_notification","userId":null,"seq":1,"seqScope":"app.p0","at":"not a time"}"#
            _ = try await redis.send(
                RedisCommand("XADD", keys.events().stream, "*", "event.version", "2", "event.id", "evt_bad", "event", bad))
            _ = try await LedgerGrants.grant(
                LedgerGrants.Request(user: "alice", coins: 5, reason: "a\u{0}b", by: "desk", now: testNow), keys: keys, on: redis)
            try await rig.apply(Fixture.client("bob", [Sale.coins("c2")], environment: "Production"))
            let environment = [
                "TOLLGATE_REDIS_URL": rig.ledger.server.url, "TOLLGATE_PARTITIONS": "1", "TOLLGATE_POSTGRES_URL": rig.postgres.url,
            ]
            let export = try await ChildProcess.run("tollctl", arguments: ["export", "--since", "2020-01-01"], environment: environment)
            #expect(export.status == 1, "\(export.output)")
            #expect(export.output.contains("skipped event evt_bad"), "\(export.output)")
            #expect(export.output.contains("skipped=1"), "\(export.output)")
            #expect(try await rig.number("SELECT count(*) FROM events") == 3, "every event but the bad one")
            #expect(try await rig.strings("SELECT reason FROM grants") == [#"a\u0000b"#])
            #expect(try await rig.number("SELECT count(*) FROM users") == 2)
            let audit = try await rig.audit()
            #expect(audit.differences == [])
        }
    }
}
