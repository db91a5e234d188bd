import Core
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// `tollctl layout repartition`'s work: a single-primary deployment's ledger moved from one partition to sixteen,
/// then used by a sixteen-partition fulfiller on the same data.
@Suite struct RepartitionTests {
    @Test func aSinglePartitionLedgerMovesToSixteenAndKeepsWorking() async throws {
        try await withRedisServer { server in
            // Layout 1: a coin purchase, a subscription (in the sweep index), a notification parked for a chain no one
            // owns yet, an unpaid order.
            let order = try await LedgerHarness.on(server, partitions: 1) { h in
                #expect(
                    try await h.deliver(Fixture.client("alice", [Fixture.transaction("a1", product: "coins100")])).outcome == .fulfilled)
                let vip = Fixture.transaction("s1", product: "vip.month", expires: testNow + 20 * day)
                #expect(try await h.deliver(Fixture.client("bob", [vip])).outcome == .fulfilled)
                let parked = Fixture.notification("REFUND", [Fixture.transaction("x1", product: "coins100", revoked: testNow)])
                #expect(try await h.deliver(parked).outcome == .parked)
                // A tester's sandbox purchase, on erin's sandbox side (`…:sbx:…` keys move with her tag).
                var review = Fixture.client("erin", [Fixture.transaction("e1", product: "coins100")])
                review.placeSide(deploymentIsProduction: true)
                #expect(try await h.deliver(review).outcome == .fulfilled)
                try await h.keys.checkLayout(on: h.redis)
                return try await Fixture.order(h, user: "carol", product: "coins100")
            }
            let redis = RedisPool(configuration: server.configuration(), size: 2, logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let repartition = try Repartition(redis: redis, prefix: "tg", partitions: 16)

            // Unfinished work refuses the move: an event nobody has read yet.
            let unread = try await redis.xadd(
                Keys().verified().stream, fields: try Fixture.client("dave", [Fixture.transaction("d1", product: "coins1")]).streamFields())
            await #expect(throws: PipelineError.self) { try await repartition.run() }
            #expect(try await redis.send("EXISTS", "tg:{u:alice}:account").int == 1, "nothing moved")
            _ = try await redis.send("XDEL", Keys().verified().stream, try #require(unread))

            // Interrupted after the mark: the services refuse to start, and running again finishes the move.
            _ = try await redis.send("HSET", Keys().layoutRecord, "migrating", 16)
            await #expect(throws: PipelineError.self) { try await Keys().checkLayout(on: redis) }
            let report = try await repartition.run()
            #expect(report.userKeys >= 8)
            #expect(report.chainKeys == 4, "the owners of a1, s1 and e1, x1's parked list: \(report)")
            #expect(report.sweepEntries == 1)
            #expect(try await repartition.run().alreadyDone)
            #expect(try await redis.send("EXISTS", "tg:{u:alice}:account", "tg:{otx:a1}:owner", "tg:{p0}:subs:due").int == 0)
            await #expect(throws: PipelineError.self) { try await Keys().checkLayout(on: redis) }

            try await LedgerHarness.on(server, partitions: 16) { h in
                try await h.keys.checkLayout(on: h.redis)
                let audit = try await h.audit()
                #expect(audit.users == 3 && audit.differences.isEmpty, "\(audit)")
                #expect(try await h.coins("alice") == 100)
                #expect(try await h.hash(h.keys.on(.sandbox).account(user: "erin"))["coins"] == "100")
                #expect(try await h.coins("erin") == 0)
                #expect(try await h.entitlement("bob", "vip")?.state == "active")
                #expect(try await h.redis.send("GET", h.keys.binding(originalTransactionId: "a1")).string == "alice")
                let bobs = h.keys.subscriptionsDue(partition: h.keys.partition(ofUser: "bob"))
                #expect(try await h.redis.send("ZSCORE", bobs, #"["Sandbox","vip","bob"]"#).int == testNow + 20 * day)

                // Apple's refund of alice's purchase reaches her in her partition.
                let refund = try await h.deliver(
                    Fixture.notification("REFUND", [Fixture.transaction("a1", product: "coins100", revoked: testNow)]))
                #expect(refund.transactions?.map(\.result) == ["refunded"], "\(refund)")
                #expect(try await h.coins("alice") == 0)
                // The parked refund waits for x1's owner, who pays carol's migrated order with it.
                let bought = try await h.deliver(
                    Fixture.client("carol", [Fixture.transaction("x1", product: "coins100", token: order.appAccountToken)]))
                #expect(bought.outcome == .fulfilled && bought.unparked == 1, "\(bought)")
                #expect(try await h.hash(h.keys.order(user: "carol", orderNo: order.orderNo))["state"] == "paid")
                #expect(try await h.drain().map(\.outcome) == [.fulfilled])
                #expect(try await h.coins("carol") == 0)
                #expect(try await h.audit().differences.isEmpty)
            }
        }
    }

    /// Issue 33: every project's ledger moves, not only the default one's. The project `shop2`'s user keys, chain
    /// bindings, sweep index and grants' due index land in the new layout under its own keys, beside the default
    /// project's alice (another user), and both audit clean there.
    @Test func everyProjectsKeysMoveWithTheirOwnKeys() async throws {
        try await withRedisServer { server in
            try await LedgerHarness.on(server, partitions: 1) { h in
                #expect(
                    try await h.deliver(Fixture.client("alice", [Fixture.transaction("a1", product: "coins100")])).outcome == .fulfilled)
                var coins = Fixture.client("alice", [Fixture.transaction("g1", product: "coins100")])
                coins.project = "shop2"
                #expect(try await LedgerProjectTests.deliver(coins, h).outcome == .fulfilled)
                var vip = Fixture.client("bob", [Fixture.transaction("gs1", product: "vip.month", expires: testNow + 20 * day)])
                vip.project = "shop2"
                #expect(try await LedgerProjectTests.deliver(vip, h).outcome == .fulfilled)
                _ = try await LedgerGrants.grant(
                    LedgerGrants.Request(user: "carol", entitlement: "vip", until: testNow + day, reason: "beta", by: "ops", now: testNow),
                    keys: h.keys.inProject(LedgerProjectTests.shop2), on: h.redis)
                try await h.keys.checkLayout(on: h.redis)
            }
            let redis = RedisPool(configuration: server.configuration(), size: 2, logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            let report = try await Repartition(redis: redis, prefix: "tg", partitions: 16).run()
            #expect(report.projects == ["shop2"], "\(report)")
            #expect(report.sweepEntries == 1 && report.chainKeys >= 3, "\(report)")
            #expect(
                try await redis.send(
                    "EXISTS", "tg:shop2:{u:alice}:account", "tg:shop2:{u:bob}:account", "tg:shop2:{otx:g1}:owner",
                    "tg:shop2:{p0}:subs:due", "tg:{u:alice}:account"
                ).int == 0)

            try await LedgerHarness.on(server, partitions: 16) { h in
                let shop2 = h.keys.inProject(LedgerProjectTests.shop2)
                #expect(try await h.coins("alice") == 100)
                #expect(try await h.hash(shop2.account(user: "alice"))["coins"] == "100")
                #expect(try await h.redis.send("GET", shop2.binding(originalTransactionId: "g1")).string == "alice")
                #expect(try await h.redis.send("GET", h.keys.binding(originalTransactionId: "a1")).string == "alice")
                let bobs = shop2.subscriptionsDue(partition: h.keys.partition(ofUser: "bob"))
                #expect(try await h.redis.send("ZSCORE", bobs, #"["Sandbox","vip","bob"]"#).int == testNow + 20 * day)
                let carols = shop2.grantsDue(partition: h.keys.partition(ofUser: "carol"))
                #expect(try await h.redis.send("ZCARD", carols).int == 1)
                #expect(try await LedgerGrants.list(user: "carol", keys: shop2, on: h.redis).count == 1)
                let audit = try await LedgerAudit(redis: h.redis, keys: shop2).run()
                #expect(audit.users >= 2 && audit.differences.isEmpty, "\(audit)")
                #expect(try await h.audit().differences.isEmpty)
            }
        }
    }
}
