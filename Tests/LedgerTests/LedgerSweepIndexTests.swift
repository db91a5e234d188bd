import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// The reconciler's sweep index, kept by the apply function: an auto-renewable subscription is due for a
/// look at Apple's status when its period (or grace) ends; news that settles it (billing retry, expiry with
/// auto-renew off, revocation) takes it out; scores only move later.
@Suite struct LedgerSweepIndexTests {
    static let member = #"["Sandbox","vip","alice"]"#

    func renewal(auto: Int = 1, retry: Bool = false, grace: Int64? = nil, signed: Int64) -> PurchaseEventRenewal {
        PurchaseEventRenewal(
            originalTransactionId: "s1", productId: "vip.month", autoRenewStatus: auto,
            isInBillingRetryPeriod: retry, gracePeriodExpiresDate: grace, signedDate: signed)
    }

    func due(_ h: LedgerHarness) async throws -> (score: Int64?, reference: String?) {
        let score = try await h.redis.send(
            RedisCommand("ZSCORE", h.keys.subscriptionsDue(partition: h.keys.partition(ofUser: "alice")), Self.member)
        ).int
        let reference = try await h.redis.send(
            RedisCommand("HGET", h.keys.subscriptionsDueReference(partition: h.keys.partition(ofUser: "alice")), Self.member)
        ).string
        return (score, reference)
    }

    @Test func activeIsDueAtItsEndAndRenewalsOnlyMoveItLater() async throws {
        try await LedgerHarness.with { h in
            var first = Fixture.client(
                "alice",
                [
                    Fixture.transaction(
                        "s1", product: "vip.month", purchase: testNow - 10 * day, expires: testNow + 20 * day, signed: testNow - 10 * day)
                ])
            first.renewals = [renewal(signed: testNow - 10 * day)]
            try await h.deliver(first)
            #expect(try await due(h) == (testNow + 20 * day, "s1"))

            try await h.deliver(
                Fixture.notification(
                    "DID_RENEW",
                    [
                        Fixture.transaction(
                            "s2", product: "vip.month", otid: "s1", purchase: testNow, expires: testNow + 50 * day, signed: testNow)
                    ],
                    renewals: [renewal(signed: testNow)], signed: testNow))
            #expect(try await due(h) == (testNow + 50 * day, "s2"))

            // The sweeper pushed its next look later; a replayed older period does not pull it back.
            _ = try await h.redis.send(
                RedisCommand(
                    "ZADD", h.keys.subscriptionsDue(partition: h.keys.partition(ofUser: "alice")), "XX", "GT", testNow + 60 * day,
                    Self.member))
            try await h.deliver(
                Fixture.client(
                    "alice",
                    [
                        Fixture.transaction(
                            "s1", product: "vip.month", purchase: testNow - 10 * day, expires: testNow + 20 * day,
                            signed: testNow - 10 * day)
                    ]))
            #expect(try await due(h).score == testNow + 60 * day)
        }
    }

    @Test func billingRetryLeavesTheIndexAndARecoveredRenewalReturns() async throws {
        try await LedgerHarness.with { h in
            var first = Fixture.client(
                "alice",
                [
                    Fixture.transaction(
                        "s1", product: "vip.month", purchase: testNow - 31 * day, expires: testNow - day, signed: testNow - 31 * day)
                ])
            first.renewals = [renewal(signed: testNow - 31 * day)]
            try await h.deliver(first)
            #expect(try await due(h) == (testNow - day, "s1"))
            try await h.deliver(
                Fixture.notification(
                    "DID_FAIL_TO_RENEW", [],
                    renewals: [renewal(retry: true, signed: testNow - 1000)], signed: testNow - 1000))
            #expect(try await h.entitlement("alice", "vip")?.state == "billingRetry")
            #expect(try await due(h) == (nil, nil))
            try await h.deliver(
                Fixture.notification(
                    "DID_RENEW", subtype: "BILLING_RECOVERY",
                    [
                        Fixture.transaction(
                            "s2", product: "vip.month", otid: "s1", purchase: testNow, expires: testNow + 30 * day, signed: testNow)
                    ],
                    renewals: [renewal(signed: testNow)], signed: testNow))
            #expect(try await due(h) == (testNow + 30 * day, "s2"))
        }
    }

    @Test func expiredWithAutoRenewOffLeavesTheIndexAndConsumablesNeverEnterIt() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("c1", product: "coins100")]))
            #expect(
                try await h.redis.send(RedisCommand("EXISTS", h.keys.subscriptionsDue(partition: h.keys.partition(ofUser: "alice")))).int
                    == 0)

            var first = Fixture.client(
                "alice",
                [
                    Fixture.transaction(
                        "s1", product: "vip.month", purchase: testNow - 31 * day, expires: testNow - day, signed: testNow - 31 * day)
                ])
            first.renewals = [renewal(signed: testNow - 31 * day)]
            try await h.deliver(first)
            // Ended while auto-renew is on: Apple probably renewed; due at the old end.
            #expect(try await due(h) == (testNow - day, "s1"))
            try await h.deliver(
                Fixture.notification(
                    "EXPIRED", subtype: "VOLUNTARY", [],
                    renewals: [renewal(auto: 0, signed: testNow)], signed: testNow))
            #expect(try await h.entitlement("alice", "vip")?.state == "expired")
            #expect(try await due(h) == (nil, nil))
        }
    }
}
