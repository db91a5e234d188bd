import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// A promotional offer's redemption (`offerType` 2) is matched to a signature of ingest's through the order its
/// `appAccountToken` names (`offer:<offerId>` on the order); one that matches none is counted as a fraud signal and
/// credited all the same — Apple was paid (docs/ARCHITECTURE.md, invariant 8).
@Suite struct LedgerOfferRedemptionTests {
    /// An order of `user` for `vip.month`, its token signed for `offer` as ingest records it (none: never signed).
    func order(_ h: LedgerHarness, _ user: String, signed offer: String?) async throws -> Order {
        let order = try await Fixture.order(h, user: user, product: "vip.month")
        if let offer {
            _ = try await h.redis.send(
                RedisCommand("HSET", h.keys.order(user: user, orderNo: order.orderNo), Order.Field.offer(offer), testNow - 60_000))
        }
        return order
    }

    func redemption(
        _ tid: String, otid: String? = nil, token: String?, offer: String?, purchase: Int64 = testNow - 1000
    ) -> PurchaseEventTransaction {
        Fixture.transaction(
            tid, product: "vip.month", otid: otid, purchase: purchase, expires: purchase + 30 * day, token: token, signed: purchase,
            offerType: 2, offerIdentifier: offer)
    }

    func fraudCount(_ h: LedgerHarness, _ user: String) async throws -> String? {
        try await h.hash(h.keys.ledgerMeta(user: user))["fraud:offer_unsigned"]
    }

    @Test func aRedemptionOfASignedOfferIsMatchedThroughItsToken() async throws {
        try await LedgerHarness.with { h in
            let order = try await order(h, "alice", signed: "winback50")
            let outcome = try await h.deliver(
                Fixture.client("alice", [redemption("p1", token: order.appAccountToken, offer: "winback50")]))
            #expect(outcome.outcome == .fulfilled && outcome.signals == nil)
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "p1"))
            #expect(record["offer"] == "winback50" && record["offer.signed"] == "1")
            #expect(try await fraudCount(h, "alice") == nil)
            #expect(try await h.entitlement("alice", "vip")?.state == "active")

            // The next period of a pay-as-you-go offer (Apple's renewal, same token and offer) matches the same order.
            let renewal = try await h.deliver(
                Fixture.notification(
                    "DID_RENEW",
                    [redemption("p2", otid: "p1", token: order.appAccountToken.uppercased(), offer: "winback50", purchase: testNow)]))
            #expect(renewal.outcome == .fulfilled && renewal.signals == nil)
            #expect(try await h.hash(h.keys.transaction(user: "alice", transactionId: "p2"))["offer.signed"] == "1")
            #expect(try await fraudCount(h, "alice") == nil)
        }
    }

    @Test func anUnmatchedRedemptionIsCreditedAndCountedOnceAsAFraudSignal() async throws {
        try await LedgerHarness.with { h in
            let other = try await order(h, "alice", signed: "loyal3m")
            let unsigned = try await order(h, "alice", signed: nil)
            let bobs = try await order(h, "bob", signed: "winback50")
            let cases: [(tid: String, token: String?, offer: String?)] = [
                ("u1", nil, "winback50"),  // no token: nothing to match it to
                ("u2", unsigned.appAccountToken, "winback50"),  // a token never signed for an offer
                ("u3", other.appAccountToken, "winback50"),  // signed for another offer
                ("u4", other.appAccountToken, nil),  // Apple named no offer
                ("u6", unsigned.appAccountToken, String(repeating: "é", count: 200)),  // no catalog offer is this long
            ]
            for (index, (tid, token, offer)) in cases.enumerated() {
                let outcome = try await h.deliver(Fixture.client("alice", [redemption(tid, token: token, offer: offer)]))
                #expect(outcome.outcome == .fulfilled, "\(tid)")
                #expect(outcome.signals == ["offer_unsigned"], "\(tid)")
                #expect(outcome.transactions?.first?.result == "applied", "\(tid)")
                let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: tid))
                #expect(record["state"] == "applied" && record["offer.signed"] == "0", "\(tid)")
                #expect(try await fraudCount(h, "alice") == String(index + 1), "\(tid)")
            }
            // Credited all the same.
            #expect(try await h.entitlement("alice", "vip")?.state == "active")
            // Bob's signature does not vouch for alice's purchase with bob's token: that purchase is bob's, and bob's
            // order was signed for it.
            let forBob = try await h.deliver(Fixture.client("alice", [redemption("u5", token: bobs.appAccountToken, offer: "winback50")]))
            #expect(forBob.signals == nil)
            _ = try await h.drain()
            #expect(try await h.hash(h.keys.transaction(user: "bob", transactionId: "u5"))["offer.signed"] == "1")

            // A replay, and Apple's notification of the same purchase, count nothing more.
            let replay = try await h.deliver(Fixture.client("alice", [redemption("u1", token: nil, offer: "winback50")]))
            #expect(replay.signals == nil && replay.transactions?.first?.result == "duplicate")
            let notified = try await h.deliver(
                Fixture.notification("SUBSCRIBED", [redemption("u2", token: unsigned.appAccountToken, offer: "winback50")]))
            #expect(notified.signals == nil)
            #expect(try await fraudCount(h, "alice") == "5")
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    @Test func anUnsignedRedemptionAppleReportsFirstIsCountedWhenItIsApplied() async throws {
        try await LedgerHarness.with { h in
            let order = try await order(h, "alice", signed: "loyal3m")
            // Apple's notification finds its owner through the order's token.
            let outcome = try await h.deliver(
                Fixture.notification("SUBSCRIBED", [redemption("n1", token: order.appAccountToken, offer: "winback50")]))
            #expect(outcome.outcome == .fulfilled)
            #expect(outcome.signals == ["offer_unsigned"])
            #expect(try await fraudCount(h, "alice") == "1")
            #expect(try await h.entitlement("alice", "vip")?.state == "active")
        }
    }
}
