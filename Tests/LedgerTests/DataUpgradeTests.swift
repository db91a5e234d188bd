import Core
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// The stored-data version (``StoredData``) and `tollctl upgrade`'s work (``DataUpgrade``): who records the version,
/// which data a service refuses, and the upgrade of a ledger written before the transaction owner index.
@Suite struct DataUpgradeTests {
    @Test func anEmptyRedisGetsTheCurrentVersionAndServicesStart() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let keys = Keys()
            try await keys.checkLayout(on: redis)
            #expect(try await keys.storedDataVersion(on: redis) == StoredData.version)
            #expect(try await keys.recordedPartitions(on: redis) == 1)
            try await keys.checkLayout(on: redis)
            let report = try await DataUpgrade(redis: redis, keys: keys, projects: [.default]).run()
            #expect(report.alreadyCurrent && report.steps.isEmpty, "\(report)")

            // The upgrade on an empty Redis records the version as a service would.
            let other = Keys(prefix: "fresh")
            let fresh = try await DataUpgrade(redis: redis, keys: other, projects: [.default]).run()
            #expect(fresh.empty && fresh.to == StoredData.version, "\(fresh)")
            #expect(try await other.storedDataVersion(on: redis) == StoredData.version)
        }
    }

    /// A ledger as a release before 0.9.0 left it: the layout record without a data version, records without the
    /// owner index. Refused until the upgrade, which indexes every record (in the owner's partition) and records the
    /// version; a second run changes nothing.
    @Test(arguments: [1, 16]) func olderDataIsRefusedUntilUpgradedOnce(partitions: Int) async throws {
        try await withRedisServer { server in
            try await LedgerHarness.on(server, partitions: partitions) { h in
                let vip = Fixture.transaction("s1", product: "vip.month", expires: testNow + 20 * day)
                for (user, transaction) in [("alice", Fixture.transaction("a1", product: "coins100")), ("bob", vip)] {
                    #expect(try await h.deliver(Fixture.client(user, [transaction])).outcome == .fulfilled)
                }
                let owners = [("alice", "a1"), ("bob", "s1")].map { user, tid in
                    (user, h.keys.transactionOwner(partition: h.keys.partition(ofUser: user), transactionId: tid))
                }
                for (_, key) in owners { _ = try await h.redis.send(RedisCommand("DEL", key: key)) }
                // The harness recorded the layout as today's first service does; a release before 0.9.0 recorded no version.
                _ = try await h.redis.send(RedisCommand("HDEL", key: h.keys.layoutRecord, StoredData.field))

                await #expect(throws: PipelineError.dataUpgradeRequired(stored: 0, current: StoredData.version)) {
                    try await h.keys.checkLayout(on: h.redis)
                }
                let upgrade = DataUpgrade(redis: h.redis, keys: h.keys, projects: [.default])
                let report = try await upgrade.run()
                #expect(report.from == 0 && report.to == StoredData.version, "\(report)")
                #expect(report.steps == ["1: transaction owner index, project default: users=2 transactions=2 written=2"])
                for (user, key) in owners { #expect(try await h.redis.send(RedisCommand("GET", key: key)).string == user) }
                try await h.keys.checkLayout(on: h.redis)
                #expect(try await upgrade.run().alreadyCurrent)
                #expect(try await h.audit().differences.isEmpty)
            }
        }
    }

    /// A layout-1 deployment from before the layout record: its `{p0}` streams and no record. A service refuses it
    /// (as one configured for other partitions did before), and so does an upgrade configured for 16 partitions.
    @Test func dataFromBeforeTheLayoutRecordIsOlderData() async throws {
        try await withRedisServer { server in
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let keys = Keys()
            _ = try await redis.xadd(keys.jobs().stream, fields: [("job", Array("j".utf8))])
            let sixteen = Keys(layout: try PartitionLayout(count: 16))
            await #expect(throws: PipelineError.layoutMismatch(configured: 16, recorded: 1)) { try await sixteen.checkLayout(on: redis) }
            await #expect(throws: PipelineError.layoutMismatch(configured: 16, recorded: 1)) {
                try await DataUpgrade(redis: redis, keys: sixteen, projects: [.default]).run()
            }
            await #expect(throws: PipelineError.dataUpgradeRequired(stored: 0, current: StoredData.version)) {
                try await keys.checkLayout(on: redis)
            }
            #expect(try await DataUpgrade(redis: redis, keys: keys, projects: [.default]).run().from == 0)
            #expect(try await keys.recordedPartitions(on: redis) == 1)
            try await keys.checkLayout(on: redis)

            // Data a newer release wrote: this build's upgrade refuses it, naming why.
            _ = try await redis.send(RedisCommand("HSET", key: keys.layoutRecord, StoredData.field, StoredData.version + 1))
            await #expect(throws: PipelineError.dataTooNew(stored: StoredData.version + 1, current: StoredData.version)) {
                try await DataUpgrade(redis: redis, keys: keys, projects: [.default]).run()
            }
        }
    }

    /// Every fixture an earlier build wrote (Tests/Fixtures/upgrade), in one partition and moved to sixteen first
    /// (`tollctl layout repartition` before or after the upgrade): refused, upgraded, every old record found by its
    /// transaction id in its owner's partition, the balances audit clean.
    @Test(arguments: UpgradeFixture.names, [1, 16]) func aFixtureUpgradesInAnyLayout(name: String, partitions: Int) async throws {
        let fixture = try UpgradeFixture(name)
        try await withRedisServer(loading: fixture.dump) { server in
            let redis = RedisPool(configuration: server.configuration(), size: 2, logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            await #expect(throws: PipelineError.dataUpgradeRequired(stored: 0, current: StoredData.version)) {
                try await Keys().checkLayout(on: redis)
            }
            if partitions > 1 { _ = try await Repartition(redis: redis, prefix: "tg", partitions: partitions).run() }
            let keys = Keys(layout: try PartitionLayout(count: partitions))
            let report = try await DataUpgrade(redis: redis, keys: keys, projects: [.default]).run()
            let transactions = fixture.manifest.users.values.map(\.transactions.count).reduce(0, +)
            #expect(report.from == 0 && report.steps.count == 1 && report.steps[0].hasSuffix("written=\(transactions)"), "\(report)")
            for (user, held) in fixture.manifest.users {
                for tid in held.transactions {
                    let owner = keys.transactionOwner(partition: keys.partition(ofUser: user), transactionId: tid)
                    #expect(try await redis.send(RedisCommand("GET", key: owner)).string == user, "\(tid)")
                }
                let account = try await redis.hgetall(keys.account(user: user))
                #expect(account["coins"].flatMap { Int($0) } ?? 0 == held.coins, "\(user): \(account)")
            }
            try await keys.checkLayout(on: redis)
            #expect(try await DataUpgrade(redis: redis, keys: keys, projects: [.default]).run().alreadyCurrent)
            let audit = try await LedgerAudit(redis: redis, keys: keys).run()
            #expect(audit.users == fixture.manifest.users.count && audit.differences.isEmpty, "\(audit)")
        }
    }
}
