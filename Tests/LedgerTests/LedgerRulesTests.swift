import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct LedgerRulesTests {
    @Test func consumableCreditsCoinsTimesQuantityOncePerTransaction() async throws {
        try await LedgerHarness.with { h in
            let tx = Fixture.transaction("c1", product: "coins100", quantity: 3)
            let first = try await h.deliver(Fixture.client("alice", [tx], job: "job1"))
            #expect(first.outcome == .fulfilled)
            #expect(first.transactions?.first?.result == "applied")
            #expect(try await h.coins("alice") == 300)
            let second = try await h.deliver(Fixture.client("alice", [tx], job: "job2"))
            #expect(second.transactions?.first?.result == "duplicate")
            #expect(try await h.coins("alice") == 300)
            let events = try await h.events("alice")
            #expect(events.count == 1)
            #expect(events.first?.string("kind") == "coins")
            #expect(events.first?.string("delta") == "300")
            #expect(events.first?.string("transactionId") == "c1")
            #expect(events.first?.string("at") == String(testNow))
            #expect(try await h.job("job1")?.state == .fulfilled)
            #expect(try await h.job("job2")?.state == .fulfilled)
            let record = try #require(TransactionRecord(hash: try await h.hash(h.keys.transaction(user: "alice", transactionId: "c1"))))
            #expect(record.coins == 300 && record.state == "applied" && record.environment == "Sandbox")
            #expect(try await h.pendingCount() == 0)
        }
    }

    @Test func familySharingGrantsEntitlementsButNeverCoins() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(
                Fixture.client(
                    "alice",
                    [
                        Fixture.transaction("f1", product: "coins100", family: true),
                        Fixture.transaction("f2", product: "noads", family: true),
                    ]))
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.entitlement("alice", "no_ads")?.state == "active")
        }
    }

    @Test func unknownProductIsRecordedAndReportedButNotCredited() async throws {
        try await LedgerHarness.with { h in
            let outcome = try await h.deliver(Fixture.client("alice", [Fixture.transaction("u1", product: "mystery")], job: "jobU"))
            #expect(outcome.outcome == .rejected && outcome.reason == "unknown_product")
            #expect(try await h.job("jobU")?.reason == "unknown_product")
            #expect(try await h.job("jobU")?.state == .rejected)
            #expect(try await h.coins("alice") == 0)
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "u1"))
            #expect(record["state"] == "unknown_product")
        }
    }

    @Test func nonConsumableUnlocksUntilRevoked() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("n1", product: "noads")]))
            let unlocked = try #require(try await h.entitlement("alice", "no_ads"))
            #expect(unlocked.state == "active" && unlocked.expiresAt == nil)
            try await h.deliver(Fixture.notification("REFUND", [Fixture.transaction("n1", product: "noads", revoked: testNow)]))
            #expect(try await h.entitlement("alice", "no_ads")?.state == "revoked")
            let states = try await h.events("alice").compactMap { $0.string("state") }
            #expect(states == ["active", "revoked"])
        }
    }

    @Test func nonRenewingPassesStackDurationDays() async throws {
        try await LedgerHarness.with { h in
            let start = testNow - 10 * day
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p1", product: "pass90", purchase: start)]))
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p2", product: "pass90", purchase: start + 5 * day)]))
            let pass = try #require(try await h.entitlement("alice", "pass"))
            #expect(pass.state == "active")
            #expect(try await h.hash(h.keys.account(user: "alice"))["ent:pass:expires"] == String(start + 180 * day))
        }
    }

    @Test func aOneCoinTransactionCannotPayATwoThousandCoinOrder() async throws {
        try await LedgerHarness.with { h in
            let order = try await Fixture.order(h, user: "alice", product: "coins2000")
            let fraud = try await h.deliver(
                Fixture.client(
                    "alice", [Fixture.transaction("cheap", product: "coins1", token: order.appAccountToken)],
                    order: order.orderNo, job: "jobF"))
            #expect(fraud.outcome == .rejected && fraud.reason == "product_mismatch")
            #expect(try await h.job("jobF")?.reason == "product_mismatch")
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.hash(h.keys.order(user: "alice", orderNo: order.orderNo))["state"] == "pending")
            #expect(try await h.hash(h.keys.ledgerMeta(user: "alice"))["fraud:product_mismatch"] == "1")

            let paid = try await h.deliver(
                Fixture.client(
                    "alice", [Fixture.transaction("real", product: "coins2000", token: order.appAccountToken)],
                    order: order.orderNo))
            #expect(paid.outcome == .fulfilled)
            #expect(try await h.coins("alice") == 2000)
            let stored = try #require(Order(hash: try await h.hash(h.keys.order(user: "alice", orderNo: order.orderNo))))
            #expect(stored.state == .paid && stored.transactionId == "real" && stored.paidAtMilliseconds == testNow)

            // The same transaction cannot pay a second order.
            let second = try await Fixture.order(h, user: "alice", product: "coins2000")
            let reused = try await h.deliver(
                Fixture.client(
                    "alice", [Fixture.transaction("real", product: "coins2000")], order: second.orderNo))
            #expect(reused.outcome == .rejected && reused.reason == "transaction_already_used")
            #expect(try await h.hash(h.keys.order(user: "alice", orderNo: second.orderNo))["state"] == "pending")
            #expect(try await h.coins("alice") == 2000)
        }
    }

    @Test func aReceiptReplayedByASecondUserIsRefused() async throws {
        try await LedgerHarness.with { h in
            let tx = Fixture.transaction("t1", product: "coins100")
            try await h.deliver(Fixture.client("alice", [tx]))
            let replay = try await h.deliver(Fixture.client("bob", [tx], job: "jobB"))
            #expect(replay.outcome == .rejected && replay.reason == "owned_by_another_user")
            #expect(try await h.job("jobB")?.reason == "owned_by_another_user")
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.coins("bob") == 0)
            #expect(try await h.hash(h.keys.ledgerMeta(user: "bob"))["fraud:owned_by_another_user"] == "1")
            #expect(try await h.redis.send(RedisCommand("GET", h.keys.binding(originalTransactionId: "t1"))).string == "alice")
        }
    }

    @Test func anAppleNotificationFindsItsOwnerAndOrderThroughTheAppAccountToken() async throws {
        try await LedgerHarness.with { h in
            let order = try await Fixture.order(h, user: "alice", product: "coins100")
            let outcome = try await h.deliver(
                Fixture.notification(
                    "ONE_TIME_CHARGE", [Fixture.transaction("a1", product: "coins100", token: order.appAccountToken.uppercased())]))
            #expect(outcome.outcome == .fulfilled)
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.hash(h.keys.order(user: "alice", orderNo: order.orderNo))["transaction"] == "a1")
        }
    }

    @Test func aPurchaseMadeWithAnotherUsersAppAccountTokenIsRefused() async throws {
        try await LedgerHarness.with { h in
            let order = try await Fixture.order(h, user: "alice", product: "coins100")
            let stolen = try await h.deliver(
                Fixture.client(
                    "mallory", [Fixture.transaction("m1", product: "coins100", token: order.appAccountToken)]))
            #expect(stolen.outcome == .rejected && stolen.reason == "owned_by_another_user")
            #expect(try await h.coins("mallory") == 0)
            // Apple's notification of it still reaches alice through the token.
            try await h.deliver(
                Fixture.notification(
                    "ONE_TIME_CHARGE",
                    [
                        Fixture.transaction("m1", product: "coins100", token: order.appAccountToken)
                    ]))
            #expect(try await h.coins("alice") == 100)
        }
    }
}
