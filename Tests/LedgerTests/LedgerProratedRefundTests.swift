import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// `REFUND_PRORATED` revocations (Apple's `revocationPercentage` in milli-percent): the ledger takes back
/// floor(credited × share / 100000) in total per standing refund, never more than was credited.
@Suite struct LedgerProratedRefundTests {
    static func refund(
        _ tid: String, product: String = "coins100", quantity: Int = 1, revoked: Int64 = testNow - 5000,
        type: String? = "REFUND_PRORATED", percentage: Int? = nil, uuid: String = UUID().uuidString
    ) -> PurchaseEvent {
        Fixture.notification(
            "REFUND",
            [
                Fixture.transaction(
                    tid, product: product, quantity: quantity, revoked: revoked, revocationType: type,
                    revocationPercentage: percentage)
            ], uuid: uuid)
    }

    @Test func aProratedRefundDebitsTheShareRoundedDownOnce() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p1", product: "coins100", quantity: 3)]))
            #expect(try await h.coins("alice") == 300)
            // 33.333 % of 300 coins is 99.999: 99 are taken back, never 100.
            let refund = Self.refund("p1", quantity: 3, percentage: 33_333)
            #expect(try await h.deliver(refund).transactions?.first?.result == "refunded")
            #expect(try await h.coins("alice") == 201)
            // Apple's retry (same notification) and the same revocation in a new delivery change nothing.
            #expect(try await h.deliver(refund).outcome == .duplicate)
            try await h.deliver(Self.refund("p1", quantity: 3, percentage: 33_333))
            try await h.deliver(
                Fixture.client(
                    "alice",
                    [
                        Fixture.transaction(
                            "p1", product: "coins100", quantity: 3, revoked: testNow - 5000,
                            revocationType: "REFUND_PRORATED", revocationPercentage: 33_333)
                    ]))
            #expect(try await h.coins("alice") == 201)
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "p1"))
            #expect(record["state"] == "refunded" && record["debited"] == "99")
            #expect(record["rtype"] == "REFUND_PRORATED" && record["rpct"] == "33333")
            let view = TransactionRecord(hash: record)
            #expect(view?.revocationType == "REFUND_PRORATED" && view?.revocationPercentage == 33_333)
            let events = try await h.events("alice").filter { $0.string("reason") == "refund" }
            #expect(events.count == 1)
            #expect(events.first?.string("delta") == "-99")
            #expect(events.first?.string("revocationType") == "REFUND_PRORATED")
            #expect(events.first?.string("revocationPercentage") == "33333")
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    @Test func aFullRefundAfterAProratedOneTakesOnlyTheRest() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p2", product: "coins100")]))
            try await h.deliver(Self.refund("p2", percentage: 40_000))
            #expect(try await h.coins("alice") == 60)
            // A smaller share later (an older or replayed word) takes nothing and gives nothing back.
            try await h.deliver(Self.refund("p2", revoked: testNow - 4000, percentage: 25_000))
            #expect(try await h.coins("alice") == 60)
            // A larger share takes the difference, then the full refund (same date) the remainder.
            try await h.deliver(Self.refund("p2", revoked: testNow - 3000, percentage: 50_000))
            #expect(try await h.coins("alice") == 50)
            try await h.deliver(Self.refund("p2", type: "REFUND_FULL", percentage: 100_000))
            #expect(try await h.coins("alice") == 0)
            // A full refund without a type, and any further refund, never take more than was credited.
            try await h.deliver(Self.refund("p2", revoked: testNow, type: nil))
            try await h.deliver(Self.refund("p2", revoked: testNow + 1, percentage: 100_000))
            #expect(try await h.coins("alice") == 0)
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "p2"))
            #expect(record["debited"] == "100" && record["rtype"] == "REFUND_FULL" && record["rpct"] == "100000")
            let deltas = try await h.events("alice").compactMap { $0.string("delta") }
            #expect(deltas == ["100", "-40", "-10", "-50"])
            // A reversal gives back exactly what was taken; a replay of an earlier revocation then changes nothing.
            try await h.deliver(Fixture.notification("REFUND_REVERSED", [Fixture.transaction("p2", product: "coins100")]))
            #expect(try await h.coins("alice") == 100)
            try await h.deliver(Self.refund("p2", percentage: 40_000))
            try await h.deliver(Self.refund("p2", type: "REFUND_FULL", percentage: 100_000))
            // So does one that took nothing while a larger refund stood.
            try await h.deliver(Self.refund("p2", revoked: testNow - 4000, percentage: 25_000))
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    @Test func aProratedRefundWithoutAValidShareIsAFullRefund() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p3", product: "coins100")]))
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p4", product: "coins100")]))
            try await h.deliver(Self.refund("p3", percentage: nil))
            try await h.deliver(Self.refund("p4", percentage: 250_000))
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.pendingCount() == 0)
        }
    }

    @Test func clampingCountsTheShortfallOnceAcrossEscalation() async throws {
        try await LedgerHarness.with(clamp: true) { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p5", product: "coins100")]))
            _ = try await h.redis.send(RedisCommand("HINCRBY", h.keys.account(user: "alice"), "coins", -80))  // spent
            try await h.deliver(Self.refund("p5", percentage: 50_000))
            #expect(try await h.coins("alice") == 0)
            try await h.deliver(Self.refund("p5", type: "REFUND_FULL", percentage: 100_000))
            #expect(try await h.coins("alice") == 0)
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "p5"))
            #expect(record["debited"] == "20" && record["shortfall"] == "80")
            #expect(try await h.hash(h.keys.ledgerMeta(user: "alice"))["shortfall"] == "80")
            try await h.deliver(Fixture.notification("REFUND_REVERSED", [Fixture.transaction("p5", product: "coins100")]))
            #expect(try await h.coins("alice") == 20)
        }
    }

    @Test func aProratedRefundBeforeThePurchaseIsParkedThenAppliedOnce() async throws {
        try await LedgerHarness.with { h in
            let refund = Self.refund("p6", product: "coins2000", percentage: 50_001)
            #expect(try await h.deliver(refund).outcome == .parked)
            let submitted = try await h.deliver(Fixture.client("alice", [Fixture.transaction("p6", product: "coins2000")]))
            #expect(submitted.unparked == 1)
            #expect(try await h.drain().map(\.outcome) == [.fulfilled])
            // floor(2000 × 50.001 %) = 1000.02 → 1000 taken back.
            #expect(try await h.coins("alice") == 1000)
            #expect(try await h.deliver(refund).outcome == .duplicate)
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("p6", product: "coins2000")]))
            #expect(try await h.coins("alice") == 1000)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    @Test func aProratedRefundArrivingWithThePurchaseCreditsThenDebitsTheShare() async throws {
        try await LedgerHarness.with { h in
            let revoked = Fixture.transaction(
                "p7", product: "coins100", revoked: testNow, revocationType: "REFUND_PRORATED", revocationPercentage: 10_000)
            #expect(try await h.deliver(Fixture.client("alice", [revoked])).transactions?.first?.result == "applied_refunded")
            #expect(try await h.coins("alice") == 90)
            try await h.deliver(Fixture.client("alice", [revoked]))
            #expect(try await h.coins("alice") == 90)
        }
    }

    @Test func aProratedSubscriptionRefundIsRecordedAndRevokesAsApplesStatusSays() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(
                Fixture.client(
                    "alice", [Fixture.transaction("v1", product: "vip.month", purchase: testNow - day, expires: testNow + 29 * day)]))
            #expect(try await h.entitlement("alice", "vip")?.state == "active")
            try await h.deliver(Self.refund("v1", product: "vip.month", revoked: testNow - 1000, percentage: 96_667))
            #expect(try await h.entitlement("alice", "vip")?.state == "revoked")
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "v1"))
            #expect(record["state"] == "refunded" && record["rtype"] == "REFUND_PRORATED" && record["rpct"] == "96667")
            let event = try await h.events("alice").last
            #expect(event?.string("kind") == "entitlement" && event?.string("state") == "revoked")
            #expect(event?.string("revocationType") == "REFUND_PRORATED" && event?.string("revocationPercentage") == "96667")
        }
    }
}
