import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// `TOLLGATE_REPEAT_FREE_TRIAL=refuse`: a user's second introductory free trial in a subscription group (a second
/// Apple ID's purchase chain) is recorded — Apple's word is never lost — but grants no access until the first paid
/// period of its chain; paid introductory offers are always honoured; refunds and revocations of such a trial work
/// as for any transaction.
@Suite struct LedgerRepeatFreeTrialTests {
    static let member = #"["Sandbox","vip","alice"]"#

    /// An introductory offer period of chain `otid` (its first transaction `tid` by default).
    func intro(
        _ tid: String, otid: String? = nil, purchase: Int64, days: Int64 = 7, discount: String? = "FREE_TRIAL",
        revoked: Int64? = nil
    ) -> PurchaseEventTransaction {
        Fixture.transaction(
            tid, product: "vip.month", otid: otid, purchase: purchase, expires: purchase + days * day, revoked: revoked,
            signed: purchase, offerType: 1, offerDiscountType: discount)
    }

    /// The first paid period of chain `otid`.
    func paid(_ tid: String, otid: String, purchase: Int64) -> PurchaseEventTransaction {
        Fixture.transaction(tid, product: "vip.month", otid: otid, purchase: purchase, expires: purchase + 30 * day, signed: purchase)
    }

    func row(_ h: LedgerHarness, _ tid: String) async throws -> String? {
        try await h.hash(h.keys.entitlement(user: "alice", name: "vip"))[tid]
    }

    @Test func underRefuseASecondFreeTrialGrantsNothingUntilItsFirstPaidPeriod() async throws {
        try await LedgerHarness.with(repeatFreeTrial: .refuse) { h in
            // Apple ID A's trial, long over.
            try await h.deliver(Fixture.client("alice", [intro("a1", purchase: testNow - 60 * day)]))
            #expect(try await h.entitlement("alice", "vip")?.state == "expired")

            // Apple ID B's trial: recorded, credited nothing.
            var second = Fixture.client("alice", [intro("b1", purchase: testNow - day)])
            second.renewals = [
                PurchaseEventRenewal(originalTransactionId: "b1", productId: "vip.month", autoRenewStatus: 1, signedDate: testNow - day)
            ]
            let outcome = try await h.deliver(second)
            #expect(outcome.outcome == .fulfilled)
            #expect(outcome.transactions?.first?.result == "trial_withheld")
            let record = try await h.hash(h.keys.transaction(user: "alice", transactionId: "b1"))
            #expect(record["state"] == "applied" && record["withheld"] == "1")
            #expect(try await h.entitlement("alice", "vip")?.state == "expired")
            #expect(try await row(h, "b1")?.hasPrefix("2,") == true)
            // The sweep asks Apple about B's chain when the trial ends, so that its first paid period is not missed.
            let partition = h.keys.partition(ofUser: "alice")
            #expect(
                try await h.redis.send(RedisCommand("ZSCORE", h.keys.subscriptionsDue(partition: partition), Self.member)).int
                    == testNow + 6 * day)
            #expect(
                try await h.redis.send(RedisCommand("HGET", h.keys.subscriptionsDueReference(partition: partition), Self.member)).string
                    == "b1")

            // The first paid period of B's chain grants access as usual.
            let renewed = try await h.deliver(Fixture.notification("DID_RENEW", [paid("b2", otid: "b1", purchase: testNow + 6 * day)]))
            #expect(renewed.transactions?.first?.result == "applied")
            let vip = try #require(try await h.entitlement("alice", "vip"))
            #expect(vip.state == "active")
            #expect(try await h.hash(h.keys.account(user: "alice"))["ent:vip:expires"] == String(testNow + 36 * day))
            // Apple's word about the trial again (a replay) changes nothing.
            #expect(
                try await h.deliver(Fixture.client("alice", [intro("b1", purchase: testNow - day)])).transactions?.first?.result
                    == "duplicate")
            #expect(try await h.entitlement("alice", "vip")?.state == "active")
        }
    }

    @Test func theFirstTrialPaidIntroductoryOffersAndAllowAreHonoured() async throws {
        // Under allow (the default) the second trial grants access.
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [intro("a1", purchase: testNow - 60 * day)]))
            let outcome = try await h.deliver(Fixture.client("alice", [intro("b1", purchase: testNow - day)]))
            #expect(outcome.transactions?.first?.result == "applied")
            #expect(try await h.entitlement("alice", "vip")?.state == "active")
        }
        try await LedgerHarness.with(repeatFreeTrial: .refuse) { h in
            // The first trial of the group grants access, and so does another period of its own chain.
            try await h.deliver(Fixture.client("alice", [intro("a1", purchase: testNow - 3 * day)]))
            #expect(try await h.entitlement("alice", "vip")?.state == "active")
            let sameChain = try await h.deliver(
                Fixture.notification("DID_RENEW", [intro("a2", otid: "a1", purchase: testNow - 2 * day, days: 10)]))
            #expect(sameChain.transactions?.first?.result == "applied")
            // A paid introductory offer on a second Apple ID is paid for: honoured.
            let payAsYouGo = try await h.deliver(
                Fixture.client("alice", [intro("b1", purchase: testNow - day, days: 60, discount: "PAY_AS_YOU_GO")]))
            #expect(payAsYouGo.transactions?.first?.result == "applied")
            #expect(try await h.hash(h.keys.account(user: "alice"))["ent:vip:expires"] == String(testNow + 59 * day))
            // A family member's shared trial is not the user's own introductory offer: honoured.
            var shared = intro("c1", purchase: testNow - day, days: 90)
            shared.inAppOwnershipType = "FAMILY_SHARED"
            #expect(try await h.deliver(Fixture.client("alice", [shared])).transactions?.first?.result == "applied")
            // Another user's first trial is their own.
            #expect(
                try await h.deliver(Fixture.client("bob", [intro("d1", purchase: testNow - day)])).transactions?.first?.result == "applied")
            #expect(try await h.entitlement("bob", "vip")?.state == "active")
        }
    }

    @Test func aWithheldTrialIsStillRevokedAndAReversalWithholdsItAgain() async throws {
        try await LedgerHarness.with(repeatFreeTrial: .refuse) { h in
            try await h.deliver(Fixture.client("alice", [intro("a1", purchase: testNow - 60 * day)]))
            try await h.deliver(Fixture.client("alice", [intro("b1", purchase: testNow - day)]))
            #expect(try await row(h, "b1")?.hasPrefix("2,") == true)

            let revoked = try await h.deliver(
                Fixture.notification("REVOKE", [intro("b1", purchase: testNow - day, revoked: testNow - 1000)]))
            #expect(revoked.transactions?.first?.result == "refunded")
            #expect(try await h.hash(h.keys.transaction(user: "alice", transactionId: "b1"))["state"] == "refunded")
            #expect(try await row(h, "b1")?.hasPrefix("0,") == true)

            let reversed = try await h.deliver(Fixture.notification("REFUND_REVERSED", [intro("b1", purchase: testNow - day)]))
            #expect(reversed.transactions?.first?.result == "refund_reversed")
            #expect(try await row(h, "b1")?.hasPrefix("2,") == true)
            #expect(try await h.entitlement("alice", "vip")?.state == "expired")
            #expect(try await h.audit().differences.isEmpty)
        }
    }
}
