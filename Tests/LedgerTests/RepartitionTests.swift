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
                    try await h.deliver(Fixture.client("alice", [Fixture.transaction("a1", product: "coins100")])).outcome == "fulfilled")
                let vip = Fixture.transaction("s1", product: "vip.month", expires: testNow + 20 * day)
                #expect(try await h.deliver(Fixture.client("bob", [vip])).outcome == "fulfilled")
                let parked = Fixture.notification("REFUND", [Fixture.transaction("x1", product: "coins100", revoked: testNow)])
                #expect(try await h.deliver(parked).outcome == "parked")
                // A tester's sandbox purchase, on erin's sandbox side (`…:sbx:…` keys move with her tag).
                var review = Fixture.client("erin", [Fixture.transaction("e1", product: "coins100")])
                review.placeSide(deploymentIsProduction: true)
                #expect(try await h.deliver(review).outcome == "fulfilled")
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
                #expect(bought.outcome == "fulfilled" && bought.unparked == 1, "\(bought)")
                #expect(try await h.hash(h.keys.order(user: "carol", orderNo: order.orderNo))["state"] == "paid")
                #expect(try await h.drain().map(\.outcome) == ["fulfilled"])
                #expect(try await h.coins("carol") == 0)
                #expect(try await h.audit().differences.isEmpty)
            }
        }
    }
}
