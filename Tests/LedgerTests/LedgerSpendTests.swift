import Core
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// Issue 31 item 4: a service spends a user's coins in one ledger call (``CoinSpend``, `Lua/ledger_spend.lua`) on
/// the real ledger functions, with coins credited by purchases through the real `apply`.
@Suite struct LedgerSpendTests {
    static func spend(
        _ h: LedgerHarness, _ user: String = "alice", amount: Int64, reason: String = "sword", key: String, by: String = "shop"
    ) async throws -> CoinSpend.Outcome {
        try await CoinSpend(user: user, amount: amount, reason: reason, idempotencyKey: key, by: by)
            .run(on: h.redis, keys: h.keys, now: testNow + 1000).outcome
    }

    /// The spend takes the coins, writes one `coins.spent` event after the purchase's (seq 2) on the events stream and
    /// in the user's log, and the audit still balances (it counts `coins.spent`). A retry answers the same and writes
    /// nothing; another body under the key is a conflict; a spend above the balance writes and remembers nothing.
    @Test func aSpendTakesCoinsOnceWritesItsEventAndKeepsTheAuditWhole() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p1", product: "coins100")]))
            guard case .spent(let first) = try await Self.spend(h, amount: 30, key: "k1") else {
                Issue.record("the spend was refused")
                return
            }
            #expect(first.amount == 30 && first.balance == 70 && first.seq == 2 && !first.replayed)
            #expect(first.eventId.hasPrefix("evt_") && first.at == testNow + 1000)
            #expect(try await h.coins("alice") == 70)

            let events = try await h.events("alice")
            #expect(events.count == 2)
            let entry = try #require(events.last)
            #expect(entry.string("event.type") == "coins.spent" && entry.string("seq") == "2")
            #expect(entry.string("event.id") == first.eventId)
            let event = try #require(JSONValue.read(entry.fields["event"] ?? []))
            #expect(event["type"]?.string == "coins.spent" && event["userId"]?.string == "alice")
            #expect(event["seq"]?.int == 2 && event["id"]?.string == first.eventId)
            #expect(event["amount"]?.int == 30 && event["delta"]?.int == -30 && event["balance"]?.int == 70)
            #expect(event["reason"]?.string == "sword" && event["idempotencyKey"]?.string == "k1")
            #expect(event["by"]?.string == "shop" && event["at"]?.string == "2026-01-01T00:00:01.000Z")
            #expect(event["store"] == nil && event["environment"] == nil && event["jobId"] == nil)
            // The user's own log holds the same bytes under the seq.
            let log = try await h.redis.xrange(h.keys.userEvents(user: "alice"))
            #expect(log.map(\.id) == ["1-0", "2-0"])
            #expect(log.last?.fields["event"] == entry.fields["event"])
            #expect(try await h.audit().differences.isEmpty)

            // The same key and body: the same answer, nothing more spent or written.
            guard case .spent(let again) = try await Self.spend(h, amount: 30, key: "k1") else {
                Issue.record("the retry was refused")
                return
            }
            var expected = first
            expected.replayed = true
            #expect(again == expected)
            #expect(try await Self.spend(h, amount: 31, key: "k1") == .conflict)
            #expect(try await Self.spend(h, amount: 30, reason: "shield", key: "k1") == .conflict)
            #expect(try await h.coins("alice") == 70)
            #expect(try await h.events("alice").count == 2)

            // Above the balance: refused, nothing written, the key not taken.
            #expect(try await Self.spend(h, amount: 71, key: "k2") == .insufficient(balance: 70))
            #expect(try await h.coins("alice") == 70)
            #expect(try await h.events("alice").count == 2)
            #expect(try await h.redis.send("EXISTS", h.keys.coinSpend(user: "alice", by: "shop", idempotencyKey: "k2")).int == 0)
            #expect(try await Self.spend(h, amount: 70, key: "k2") != .conflict)  // the key is still free
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.hash(h.keys.account(user: "alice"))[CoinSpend.Field.spent] == "100")
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// Issue 42, item 12: the idempotency record is the calling key's (by its name, which a rotation keeps): two keys'
    /// same idempotency key are two spends, never one's answer replayed to the other nor a conflict between them.
    @Test func twoKeysSameIdempotencyKeyAreTwoSpends() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p1", product: "coins100")]))
            guard case .spent(let shop) = try await Self.spend(h, amount: 30, key: "k1", by: "shop"),
                case .spent(let desk) = try await Self.spend(h, amount: 20, reason: "shield", key: "k1", by: "desk")
            else {
                Issue.record("a spend was refused")
                return
            }
            #expect(!shop.replayed && !desk.replayed && desk.balance == 50 && desk.seq == 3)
            guard case .spent(let again) = try await Self.spend(h, amount: 30, key: "k1", by: "shop") else {
                Issue.record("the retry was refused")
                return
            }
            #expect(again.replayed && again.eventId == shop.eventId)
            #expect(try await h.coins("alice") == 50)
            for by in ["shop", "desk"] {
                #expect(try await h.redis.send("EXISTS", h.keys.coinSpend(user: "alice", by: by, idempotencyKey: "k1")).int == 1)
            }
            // The previous release's shape holds the first key's spend, for a replica of that release (below).
            let previous = h.keys.legacyCoinSpend(user: "alice", idempotencyKey: "k1")
            #expect(try await h.redis.send("HGET", previous, "by").string == "shop")
        }
    }

    /// Issue 42, item 12, rolling upgrade the other way: a spend made by this release is also written in the previous
    /// release's shape, so a retry that reaches a replica not yet replaced (which reads `digest` and `answer` of
    /// `…:spend:<key>`, nothing else) replays it instead of spending twice.
    @Test func aSpendIsReplayedByAReplicaOfThePreviousRelease() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p1", product: "coins100")]))
            guard case .spent = try await Self.spend(h, amount: 30, key: "r1") else {
                Issue.record("the spend was refused")
                return
            }
            let own = try await h.redis.send("HMGET", h.keys.coinSpend(user: "alice", by: "shop", idempotencyKey: "r1"), "digest", "answer")
            let previous = try await h.redis.send("HMGET", h.keys.legacyCoinSpend(user: "alice", idempotencyKey: "r1"), "digest", "answer")
            #expect(own.array?.compactMap(\.string).count == 2)
            #expect(own == previous)
            // Both expire with the record's retention.
            let ttl = try await h.redis.send("TTL", h.keys.legacyCoinSpend(user: "alice", idempotencyKey: "r1")).int ?? -1
            #expect(ttl > 0 && ttl <= Int64(CoinSpend.retentionSeconds))
        }
    }

    /// Issue 42, item 12, rolling upgrade: a record the previous release wrote (per user, `…:spend:<key>`, kept 7 days)
    /// still answers a retry after the upgrade — replayed, or a conflict for another body — so it never spends twice.
    @Test func aRecordOfThePreviousShapeStillReplays() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p1", product: "coins100")]))
            guard case .spent(let first) = try await Self.spend(h, amount: 30, key: "old:1") else {
                Issue.record("the spend was refused")
                return
            }
            // The previous release's record: the same hash (digest, answer), under the user's key alone.
            _ = try await h.redis.send(
                "RENAME", h.keys.coinSpend(user: "alice", by: "shop", idempotencyKey: "old:1"),
                h.keys.legacyCoinSpend(user: "alice", idempotencyKey: "old:1"))
            for by in ["shop", "desk"] {
                guard case .spent(let again) = try await Self.spend(h, amount: 30, key: "old:1", by: by) else {
                    Issue.record("the retry was refused")
                    return
                }
                #expect(again.replayed && again.eventId == first.eventId)
            }
            #expect(try await Self.spend(h, amount: 31, key: "old:1") == .conflict)
            #expect(try await h.coins("alice") == 70)
            #expect(try await h.events("alice").count == 2)
            #expect(try await h.redis.send("EXISTS", h.keys.coinSpend(user: "alice", by: "shop", idempotencyKey: "old:1")).int == 0)
        }
    }

    /// A refund that arrives after coins were spent follows the clamp rule: credit 100, spend 80, refund → the balance
    /// stops at 0 and the record keeps the 80 it could not take back as `shortfall`.
    @Test func aRefundAfterASpendIsClampedAndKeepsTheShortfall() async throws {
        try await LedgerHarness.with(clamp: true) { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("s1", product: "coins100")]))
            guard case .spent(let spent) = try await Self.spend(h, amount: 80, key: "buy-1") else {
                Issue.record("the spend was refused")
                return
            }
            #expect(spent.balance == 20)
            try await h.deliver(Fixture.notification("REFUND", [Fixture.transaction("s1", product: "coins100", revoked: testNow)]))
            #expect(try await h.coins("alice") == 0)
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "s1"))
            #expect(record["state"] == "refunded" && record["debited"] == "20" && record["shortfall"] == "80")
            let refund = try #require(try await h.events("alice").last)
            #expect(refund.string("event.type") == "refund" && refund.string("shortfall") == "80" && refund.string("seq") == "3")
            // credited 100 − debited 20 − spent 80 = 0: the audit holds.
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// Spends draw purchased coins first: `coins.granted` (granted coins still unspent) is lowered only when the
    /// balance falls below it, and then to the balance.
    @Test func spendsDrawPurchasedCoinsBeforeGrantedOnes() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("g1", product: "coins100")]))
            let account = h.keys.account(user: "alice")
            // 50 granted coins, as grants will keep them (set directly here).
            _ = try await h.redis.send(RedisCommand("HINCRBY", account, "coins", 50))
            _ = try await h.redis.send(RedisCommand("HSET", account, CoinSpend.Field.granted, "50"))
            /// `coins/coins.granted`.
            func state() async throws -> String {
                let hash = try await h.hash(account)
                return "\(hash["coins"] ?? "-")/\(hash[CoinSpend.Field.granted] ?? "-")"
            }
            _ = try await Self.spend(h, amount: 50, key: "a")
            #expect(try await state() == "100/50")  // 50 of the 100 purchased
            _ = try await Self.spend(h, amount: 70, key: "b")
            #expect(try await state() == "30/30")  // the last 50 purchased, then 20 granted
            _ = try await Self.spend(h, amount: 30, key: "c")
            #expect(try await state() == "0/0")
            #expect(try await Self.spend(h, amount: 1, key: "d") == .insufficient(balance: 0))
        }
    }
}
