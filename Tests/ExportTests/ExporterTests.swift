import Core
import Export
import Foundation
import Ledger
import Pipeline
import PostgresNIO
import Redis
import TestSupport
import Testing

/// The exporter against a real redis-server and a real PostgreSQL: what lands, exactly once, in which order, and
/// through a crash and an outage.
@Suite(.serialized) struct ExporterTests {
    @Test func purchasesRefundsAndSubscriptionsLandAndTheAuditAgrees() async throws {
        try await ExportRig.with { rig in
            let exporter = try await rig.exporter(consumer: "e1")
            let sale = Sale.coins("c1", quantity: 2, price: 990)
            try await rig.apply(Fixture.client("alice", [sale], environment: "Production"))
            try await rig.apply(
                Fixture.client(
                    "bob", [Fixture.transaction("s1", product: "vip.month", purchase: testNow - day, expires: testNow + 29 * day)],
                    environment: "Production"))
            try await rig.apply(Fixture.notification("REFUND", [Sale.refund(sale)]))
            #expect(try await eventually(timeout: .seconds(30)) { try await rig.drained() })
            try await exporter.shutdown()

            #expect(try await rig.strings("SELECT state FROM transactions WHERE transaction_id = 'c1'") == ["refunded"])
            #expect(try await rig.number("SELECT price FROM transactions WHERE transaction_id = 'c1'") == 990)
            #expect(try await rig.number("SELECT quantity FROM transactions WHERE transaction_id = 'c1'") == 2)
            #expect(try await rig.number("SELECT coins FROM users WHERE user_id = 'alice'") == 0)
            #expect(try await rig.strings("SELECT type FROM events WHERE user_id = 'alice' ORDER BY seq") == ["purchase", "refund"])
            #expect(try await rig.strings("SELECT state FROM subscriptions WHERE user_id = 'bob'") == ["active"])
            #expect(try await rig.strings("SELECT entitlements->0->>'entitlement' FROM users WHERE user_id = 'bob'") == ["vip"])
            #expect(try await rig.strings("SELECT environment FROM transactions ORDER BY transaction_id") == ["production", "production"])

            let report = try await rig.audit()
            #expect(report.differences == [])
            #expect(report.users == 2)
            #expect(report.transactions == 2)

            // The audit names what differs: a changed balance and a row the ledger has no record of.
            try await rig.client.perform("UPDATE users SET coins = 5 WHERE user_id = 'alice'", logger: testLogger)
            try await rig.client.perform(
                "INSERT INTO transactions SELECT (jsonb_populate_record(t, '{\"transaction_id\": \"ghost\"}')).* FROM transactions t LIMIT 1",
                logger: testLogger)
            let broken = try await rig.audit()
            #expect(broken.differences.contains("user alice: coins differ"))
            #expect(broken.differences.contains { $0.hasPrefix("transaction ghost") && $0.contains("no record") })
        }
    }

    /// The revenue views over what the exporter wrote: a production sale counts (a sandbox one never does), and its
    /// refund takes it back out.
    @Test func aRefundUpdatesTheViewsFigures() async throws {
        try await ExportRig.with { rig in
            let exporter = try await rig.exporter(consumer: "e1")
            // 2 × 9.90 EUR in production; the same in sandbox, which no figure may count.
            let sale = Sale.coins("c1", quantity: 2, price: 9900)
            try await rig.apply(Fixture.client("alice", [sale], environment: "Production"))
            try await rig.apply(Fixture.client("tester", [Sale.coins("t1", quantity: 2, price: 9900)], environment: "Sandbox"))
            #expect(try await eventually(timeout: .seconds(30)) { try await rig.drained() })
            // gross 19.80; proceeds at the standard 30%: 19.80 × 0.70 = 13.86.
            #expect(try await rig.strings("SELECT sum(net)::text FROM revenue_daily") == ["19.8000"])
            #expect(try await rig.strings("SELECT sum(estimated_proceeds)::text FROM revenue_daily") == ["13.8600"])
            #expect(try await rig.number("SELECT sum(purchases) FROM revenue_daily") == 1)

            try await rig.apply(Fixture.notification("REFUND", [Sale.refund(sale)]))
            #expect(try await eventually(timeout: .seconds(30)) { try await rig.drained() })
            try await exporter.shutdown()
            // The refund's day takes the 19.80 back: net 0, proceeds 0, one refund in its month.
            #expect(try await rig.strings("SELECT sum(net)::text FROM revenue_daily") == ["0.0000"])
            #expect(try await rig.strings("SELECT sum(estimated_proceeds)::text FROM revenue_daily") == ["0.0000"])
            #expect(try await rig.number("SELECT sum(refunds) FROM refunds_monthly") == 1)
        }
    }

    /// Issue 33: the user's sandbox side (a production deployment's App Review purchase) is exported apart: its coins are
    /// a `sandbox_users` row, its events say `side = sandbox` and count their own seq, and no revenue figure counts it;
    /// the audit checks each side, before and after an operator clears it.
    @Test func theSandboxSideIsExportedApart() async throws {
        try await ExportRig.with(partitions: 2) { rig in
            let (redis, keys) = (rig.ledger.redis, rig.ledger.keys)
            let exporter = try await rig.exporter(consumer: "e1")
            try await rig.apply(Fixture.client("alice", [Sale.coins("c1", price: 9900)], environment: "Production"))
            var review = Fixture.client("alice", [Sale.coins("s1", price: 9900)], environment: "Sandbox")
            review.placeSide(deploymentIsProduction: true)
            try await rig.apply(review)
            // The backend says the sandbox side may pay (`allowSandbox`), as for a tester: both sides pay, the sandbox first.
            let spend = CoinSpend(user: "alice", amount: 150, reason: "castle", idempotencyKey: "k1", by: "shop", allowSandbox: true)
            _ = try await spend.run(on: redis, keys: keys, now: testNow + 1)
            #expect(try await eventually(timeout: .seconds(30)) { try await rig.drained() })
            #expect(try await rig.number("SELECT coins FROM users WHERE user_id = 'alice'") == 50)
            #expect(try await rig.number("SELECT coins_spent FROM sandbox_users WHERE user_id = 'alice'") == 100)
            #expect(
                try await rig.strings("SELECT side || ' ' || type || ' ' || seq FROM events ORDER BY side, seq") == [
                    "primary purchase 1", "primary coins.spent 2", "sandbox purchase 1", "sandbox coins.spent 2",
                ])
            #expect(try await rig.strings("SELECT side || ' ' || amount FROM spends ORDER BY side") == ["primary 50", "sandbox 100"])
            #expect(try await rig.number("SELECT sum(purchases) FROM revenue_daily") == 1)
            var report = try await rig.audit()
            #expect(report.differences.isEmpty && report.users == 2, "\(report)")

            _ = try await SandboxSide.clear(user: "alice", by: "ops", keys: keys, now: testNow + 2, on: redis)
            #expect(try await eventually(timeout: .seconds(30)) { try await rig.drained() })
            try await exporter.shutdown()
            #expect(try await rig.number("SELECT count(*) FROM events WHERE side = 'sandbox'") == 3)
            report = try await rig.audit()
            #expect(report.differences.isEmpty, "\(report)")
            // A hand-edited sandbox row is named with its side.
            try await rig.client.perform("UPDATE sandbox_users SET coins = 7", logger: testLogger)
            #expect(try await rig.audit().differences == ["user alice (sandbox side): coins differ"])
        }
    }

    /// Issue 33: each project's exporter writes its own project's rows only (one database per project,
    /// `TOLLGATE_EXPORT_PROJECT`): alice of `games` is exported by the games exporter, alice of `default` is not, and
    /// the audit of the games ledger against that database is clean.
    @Test func aProjectsExporterWritesThatProjectOnly() async throws {
        try await ExportRig.with(partitions: 2) { rig in
            let games = try #require(ProjectID("games"))
            var applier = rig.ledger.applier
            applier.projectCatalogs = [games: testCatalog]
            func deliver(_ event: PurchaseEvent) async throws {
                let id = try await rig.ledger.submit(event)
                for read in try await rig.ledger.read() where read.id == id {
                    _ = try await applier.apply(entry: read.entry, partition: read.partition)
                }
            }
            try await deliver(Fixture.client("alice", [Sale.coins("d1", price: 9900)], environment: "Production"))
            var bought = Fixture.client("alice", [Sale.coins("g1", quantity: 2, price: 4900)], environment: "Production")
            bought.project = games.rawValue
            try await deliver(bought)

            let exporter = try await rig.exporter(consumer: "g1", project: games)
            #expect(try await eventually(timeout: .seconds(30)) { try await rig.drained(project: games) })
            try await exporter.shutdown()
            #expect(try await rig.strings("SELECT user_id || ' ' || coins FROM users") == ["alice 200"])
            #expect(try await rig.strings("SELECT transaction_id FROM transactions") == ["g1"])
            let report = try await ExportAudit(
                redis: rig.ledger.redis, keys: rig.ledger.keys.inProject(games), client: rig.client, logger: testLogger
            ).run()
            #expect(report.differences.isEmpty && report.users == 1, "\(report)")
            // The default project's audit of this database names its missing rows: the projects are apart.
            #expect(!(try await rig.audit().differences.isEmpty))
        }
    }

    /// Grants and spends land in their tables; a grant's revocation written before its creation (two replicas)
    /// still ends with the revoked status and the creation's time.
    @Test func grantsAndSpendsLandWhateverTheOrder() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let (redis, keys) = (rig.ledger.redis, rig.ledger.keys)
            try await rig.apply(Fixture.client("alice", [Sale.coins("c1")]))
            let grant = LedgerGrants.Request(user: "alice", coins: 50, reason: "support ticket 42", by: "desk", now: testNow)
            _ = try await LedgerGrants.grant(grant, keys: keys, on: redis)
            let spend = CoinSpend(user: "alice", amount: 120, reason: "sword", idempotencyKey: "order-1", by: "shop")
            _ = try await spend.run(on: redis, keys: keys, now: testNow + 1)
            _ = try await LedgerGrants.revoke(user: "alice", grantId: grant.grantId, by: "desk", now: testNow + 2, keys: keys, on: redis)
            let events = try await redis.xrange(keys.events().stream).map { try ExportEvent(json: try #require($0.fields["event"])) }
            #expect(events.map(\.type) == ["purchase", "grant.created", "coins.spent", "grant.revoked"])
            let writer = ExportWriter(client: rig.client, logger: testLogger)
            for event in events.reversed() { try await writer.write(event, snapshot: nil) }

            #expect(
                try await rig.strings("SELECT status || ' ' || revoked_by || ' ' || (created_at IS NOT NULL) FROM grants") == [
                    "revoked desk true"
                ])
            #expect(
                try await rig.strings("SELECT amount || ' ' || balance || ' ' || by_key || ' ' || idempotency_key FROM spends") == [
                    "120 30 shop order-1"
                ])
            #expect(try await rig.number("SELECT last_seq FROM grants") == 4)
        }
    }

    /// Replicas start together: each copies the catalog, one after the other, and none fails.
    @Test func replicasStartingTogetherAllStart() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<6 {
                    group.addTask { try await ExportProducts.replace(with: testCatalog, on: rig.client, logger: testLogger) }
                }
                try await group.waitForAll()
            }
            #expect(try await rig.number("SELECT count(*) FROM products") == Int64(testCatalog.products.count))
        }
    }

    /// The events streams are shared: the exporter's acknowledgement leaves every entry there for the notifier's
    /// groups and `GET /v1/events`, and another group still reads them all.
    @Test func theEventsStayInTheStreamForItsOtherReaders() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let stream = rig.ledger.keys.events().stream
            _ = try await rig.ledger.redis.xgroupCreate(stream, group: "webhook:default", startID: "0", makeStream: true)
            let sale = Sale.coins("c1")
            try await rig.apply(Fixture.client("alice", [sale]))
            try await rig.apply(Fixture.notification("REFUND", [Sale.refund(sale)]))
            #expect(try await rig.exportEverything())
            #expect(try await rig.ledger.redis.xrange(stream).count == 2)
            let read = try await rig.ledger.redis.send(
                RedisCommand("XREADGROUP", "GROUP", "webhook:default", "n1", "COUNT", "10", "STREAMS", stream, ">"))
            #expect(read.array?.first?.array?.last?.array?.count == 2)
        }
    }

    /// One ledger call may record transactions that get no event of their own (a subscription's first purchase
    /// applied with its renewal): every record it applied gets its row.
    @Test func everyRecordACallAppliedIsExported() async throws {
        try await ExportRig.with(partitions: 2) { rig in
            let first = Fixture.transaction("s1", product: "vip.month", purchase: testNow - 40 * day, expires: testNow - 10 * day)
            let renewal = Fixture.transaction(
                "s2", product: "vip.month", otid: "s1", purchase: testNow - 10 * day, expires: testNow + 20 * day)
            try await rig.apply(Fixture.client("alice", [first, renewal]))
            #expect(try await rig.exportEverything())
            #expect(try await rig.strings("SELECT transaction_id FROM transactions ORDER BY transaction_id") == ["s1", "s2"])
            let report = try await rig.audit()
            #expect(report.differences == [])
        }
    }

    /// A chain's earlier purchase arriving after its renewal changes nothing a user sees, so the ledger writes no
    /// event for it, only a `record` entry: the exporter still writes its row.
    @Test func aRecordWithoutAnEventIsExported() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let first = Fixture.transaction("s1", product: "vip.month", purchase: testNow - 40 * day, expires: testNow - 10 * day)
            let renewal = Fixture.transaction(
                "s2", product: "vip.month", otid: "s1", purchase: testNow - 10 * day, expires: testNow + 20 * day)
            try await rig.apply(Fixture.client("alice", [renewal]))
            try await rig.apply(Fixture.client("alice", [first]))
            let entries = try await rig.ledger.redis.xrange(rig.ledger.keys.events().stream)
            let records = entries.filter { $0.string("kind") == "record" }
            #expect(records.count == 1)
            #expect(records.first?.string("event.txs") == "s1")
            #expect(records.first?.string("event.version") == nil)
            #expect(try await rig.exportEverything())
            #expect(try await rig.strings("SELECT transaction_id FROM transactions ORDER BY transaction_id") == ["s1", "s2"])
            let report = try await rig.audit()
            #expect(report.differences == [])
        }
    }

    @Test func anEventWrittenTwiceIsOneRow() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            try await rig.apply(Fixture.client("alice", [Sale.coins("c1")]))
            let entries = try await rig.ledger.redis.xrange(rig.ledger.keys.events().stream)
            let event = try ExportEvent(json: try #require(entries.first?.fields["event"]))
            let snapshot = try await ExportSnapshot.read(
                user: "alice", side: .primary, transactionIds: ["c1"], keys: rig.ledger.keys, on: rig.ledger.redis)
            let writer = ExportWriter(client: rig.client, logger: testLogger)
            try await writer.write(event, snapshot: snapshot)
            let once = try await rig.dump()
            try await writer.write(event, snapshot: snapshot)
            #expect(try await rig.dump() == once)
            #expect(try await rig.number("SELECT count(*) FROM events") == 1)
            #expect(try await rig.number("SELECT count(*) FROM transactions") == 1)
        }
    }

    /// A replica that wrote and died before its acknowledgement: the entry is read again, written again, and the
    /// rows are the same.
    @Test func anExporterKilledBetweenTheWriteAndTheAcknowledgementLeavesTheSameRows() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let keys = rig.ledger.keys
            _ = try await rig.ledger.redis.xgroupCreate(keys.events().stream, group: "exporter", startID: "0", makeStream: true)
            let sale = Sale.coins("c1")
            try await rig.apply(Fixture.client("alice", [sale]))
            try await rig.apply(Fixture.notification("REFUND", [Sale.refund(sale)]))
            // The dead replica read both entries and wrote them, but acknowledged neither.
            let read = try await rig.ledger.redis.send(
                RedisCommand("XREADGROUP", "GROUP", "exporter", "dead", "COUNT", "10", "STREAMS", keys.events().stream, ">"))
            #expect(read.array?.count == 1)
            let writer = ExportWriter(client: rig.client, logger: testLogger)
            for entry in try await rig.ledger.redis.xrange(keys.events().stream) {
                let event = try ExportEvent(json: try #require(entry.fields["event"]))
                let snapshot = try await ExportSnapshot.read(
                    user: "alice", side: event.side, transactionIds: ExportSnapshot.transactionIds(of: event, entry: entry), keys: keys,
                    on: rig.ledger.redis)
                try await writer.write(event, snapshot: snapshot)
            }
            let written = try await rig.dump()
            #expect(try await rig.number("SELECT count(*) FROM events") == 2)

            let exporter = try await rig.exporter(consumer: "e2", claimMinIdle: .milliseconds(300))
            #expect(try await eventually(timeout: .seconds(30)) { try await rig.drained() })
            try await exporter.shutdown()
            #expect(try await rig.dump() == written)
        }
    }

    /// Two replicas write out of order: the purchase's write, read before the refund, lands after the refund's.
    @Test func anOlderWriteNeverOverwritesANewerRow() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let keys = rig.ledger.keys
            let sale = Sale.coins("c1")
            try await rig.apply(Fixture.client("alice", [sale]))
            let early = try await ExportSnapshot.read(
                user: "alice", side: .primary, transactionIds: ["c1"], keys: keys, on: rig.ledger.redis)
            try await rig.apply(Fixture.notification("REFUND", [Sale.refund(sale)]))
            let late = try await ExportSnapshot.read(
                user: "alice", side: .primary, transactionIds: ["c1"], keys: keys, on: rig.ledger.redis)
            #expect(early.seq == 1 && late.seq == 2)
            let events = try await rig.ledger.redis.xrange(keys.events().stream).map {
                try ExportEvent(json: try #require($0.fields["event"]))
            }
            let writer = ExportWriter(client: rig.client, logger: testLogger)
            try await writer.write(events[1], snapshot: late)
            try await writer.write(events[0], snapshot: early)
            #expect(try await rig.strings("SELECT state FROM transactions") == ["refunded"])
            #expect(try await rig.number("SELECT coins FROM users") == 0)
            #expect(try await rig.number("SELECT last_seq FROM users") == 2)
            #expect(try await rig.number("SELECT count(*) FROM events") == 2)
        }
    }

    /// PostgreSQL stopped for a minute while purchases go on: the exporters wait (no entry is dead-lettered, none is
    /// lost; their heartbeats keep the claim time of 3 s from handing waiting entries around) and catch up once it is
    /// back.
    @Test func postgresStoppedForAMinuteMidLoadCatchesUpWithNothingLost() async throws {
        try await ExportRig.with(partitions: 2) { rig in
            let first = try await rig.exporter(consumer: "e1", claimMinIdle: .seconds(3))
            let second = try await rig.exporter(consumer: "e2", claimMinIdle: .seconds(3))
            for index in 0..<10 { try await rig.apply(Fixture.client("u\(index)", [Sale.coins("a\(index)")])) }
            #expect(try await eventually(timeout: .seconds(30)) { try await rig.drained() })
            try await rig.postgres.stop()
            // A purchase every 2 s of the minute.
            for index in 0..<30 {
                try await rig.apply(Fixture.client("u\(index % 10)", [Sale.coins("b\(index)")]))
                try await Task.sleep(for: .seconds(2))
            }
            try await rig.postgres.start()
            #expect(try await eventually(timeout: .seconds(60)) { try await rig.drained() })
            try await first.shutdown()
            try await second.shutdown()
            #expect(try await rig.number("SELECT count(*) FROM events") == 40)
            #expect(try await rig.number("SELECT count(*) FROM transactions") == 40)
            #expect(try await rig.number("SELECT sum(coins) FROM users") == 4000)
            for partition in rig.ledger.keys.partitions {
                let stream = rig.ledger.keys.events(partition: partition)
                #expect(try await rig.ledger.redis.xrange(stream.deadLetter).isEmpty)
            }
            let report = try await rig.audit()
            #expect(report.differences == [])
        }
    }

    @Test func anUnreadableEntryIsDeadLetteredAndTheRestGoOn() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let stream = rig.ledger.keys.events().stream
            _ = try await rig.ledger.redis.send(RedisCommand("XADD", stream, "*", "kind", "coins", "event", "{\"id\": 1"))
            try await rig.apply(Fixture.client("alice", [Sale.coins("c1")]))
            #expect(try await rig.exportEverything())
            let dead = try await rig.ledger.redis.xrange(rig.ledger.keys.events().deadLetter)
            #expect(dead.count == 1)
            #expect(dead.first?.string("reason")?.contains("export_bad_event") == true)
            #expect(try await rig.number("SELECT count(*) FROM events") == 1)
            // Both entries are still in the events stream, for its other readers.
            #expect(try await rig.ledger.redis.xrange(stream).count == 2)
        }
    }

    /// `tollctl export`'s backfill: a database filled from the ledger alone agrees with it, and filling it again
    /// changes nothing.
    @Test func theBackfillRebuildsTheTablesFromTheLedger() async throws {
        try await ExportRig.with(partitions: 2) { rig in
            let sale = Sale.coins("c1")
            try await rig.apply(Fixture.client("alice", [sale]))
            try await rig.apply(Fixture.notification("REFUND", [Sale.refund(sale)]))
            try await rig.apply(
                Fixture.client("bob", [Fixture.transaction("s1", product: "vip.month", expires: testNow + 29 * day)]))
            let backfill = ExportBackfill(
                redis: rig.ledger.redis, keys: rig.ledger.keys, writer: ExportWriter(client: rig.client, logger: testLogger),
                logger: testLogger)
            let report = try await backfill.run(sinceMilliseconds: 0)
            #expect(report.users == 2)
            #expect(report.transactions == 2)
            let audit = try await rig.audit()
            #expect(audit.differences == [])
            let once = try await rig.dump()
            _ = try await backfill.run(sinceMilliseconds: 0)
            #expect(try await rig.dump() == once)
        }
    }

    /// Issue 42: a tester mark's events (`tester.added`, `tester.removed`) are events like any other: the exporter
    /// writes them to `events` with who and why, the mark's end in the JSON.
    @Test func testerEventsAreExported() async throws {
        try await ExportRig.with(partitions: 1) { rig in
            let (redis, keys) = (rig.ledger.redis, rig.ledger.keys)
            try await rig.apply(Fixture.client("alice", [Sale.coins("c1")]))
            _ = try await Testers.add(
                user: "alice", until: testNow + 30 * day, reason: "App Review", by: "ops", now: testNow, keys: keys, on: redis)
            _ = try await Testers.remove(user: "alice", by: "ops", now: testNow + 1, keys: keys, on: redis)
            #expect(try await rig.exportEverything())
            #expect(
                try await rig.strings(
                    "SELECT type || ' ' || seq || ' ' || by_key || ' ' || COALESCE(reason, '-') || ' ' || COALESCE(body->>'until', '-') FROM events WHERE type LIKE 'tester.%' ORDER BY seq"
                ) == ["tester.added 2 ops App Review 2026-01-31T00:00:00.000Z", "tester.removed 3 ops - -"])
        }
    }
}
