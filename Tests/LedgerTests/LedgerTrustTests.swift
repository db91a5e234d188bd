import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

/// docs/ARCHITECTURE.md, invariants 8 and 9, tried as an attacker would: Apple's word about a transaction already
/// applied is never refused because of an order or another local record, and only Apple's word changes the ledger.
@Suite struct LedgerTrustTests {
    /// The hole of issue 13: buy with order O1's token, claim order O2, then keep the coins when Apple refunds.
    @Test func aTransactionBoughtForOneOrderCannotPayAnother() async throws {
        try await LedgerHarness.with { h in
            let o1 = try await Fixture.order(h, user: "alice", product: "coins100")
            let o2 = try await Fixture.order(h, user: "alice", product: "coins100")
            let o3 = try await Fixture.order(h, user: "alice", product: "coins2000")
            let bought = Fixture.transaction("t1", product: "coins100", token: o1.appAccountToken)

            for (other, reason) in [(o2, "wrong_order"), (o3, "product_mismatch")] {
                let wrong = try await h.deliver(Fixture.client("alice", [bought], order: other.orderNo))
                #expect(wrong.outcome == .rejected, "\(wrong)")
                #expect(wrong.reason == reason, "\(wrong)")
            }
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.hash(h.keys.order(user: "alice", orderNo: o2.orderNo))["state"] == "pending")

            let paid = try await h.deliver(Fixture.client("alice", [bought], order: o1.orderNo))
            #expect(paid.outcome == .fulfilled, "\(paid)")
            #expect(try await h.hash(h.keys.order(user: "alice", orderNo: o1.orderNo))["state"] == "paid")
            #expect(try await h.coins("alice") == 100)

            let refund = try await h.deliver(
                Fixture.notification(
                    "REFUND", [Fixture.transaction("t1", product: "coins100", revoked: testNow, token: o1.appAccountToken)]))
            #expect(refund.outcome == .fulfilled, "\(refund)")
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// A ledger that already recorded a transaction as paying another order than its token's (data written
    /// before the rule above) still takes Apple's refund, revocation, renewal and reversal.
    @Test func applesWordIsNeverRefusedBecauseOfAnOrder() async throws {
        try await LedgerHarness.with { h in
            let o1 = try await Fixture.order(h, user: "alice", product: "coins100")
            let o2 = try await Fixture.order(h, user: "alice", product: "coins100")
            let u1 = try await Fixture.order(h, user: "alice", product: "noads")
            let u2 = try await Fixture.order(h, user: "alice", product: "noads")
            let v1 = try await Fixture.order(h, user: "alice", product: "vip.month")
            let v2 = try await Fixture.order(h, user: "alice", product: "vip.month")
            // The transactions pay O2/U2/V2 as records, while Apple's copies carry O1/U1/V1's tokens.
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("c1", product: "coins100")], order: o2.orderNo))
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("n1", product: "noads")], order: u2.orderNo))
            try await h.deliver(
                Fixture.client(
                    "alice", [Fixture.transaction("s1", product: "vip.month", expires: testNow + day)], order: v2.orderNo))
            #expect(try await h.coins("alice") == 100)

            try await h.deliver(
                Fixture.notification(
                    "REFUND", [Fixture.transaction("c1", product: "coins100", revoked: testNow, token: o1.appAccountToken)]))
            #expect(try await h.coins("alice") == 0)
            try await h.deliver(
                Fixture.notification(
                    "REFUND_REVERSED", [Fixture.transaction("c1", product: "coins100", token: o1.appAccountToken)]))
            #expect(try await h.coins("alice") == 100)
            try await h.deliver(
                Fixture.notification(
                    "REVOKE", [Fixture.transaction("n1", product: "noads", revoked: testNow, token: u1.appAccountToken)]))
            #expect(try await h.entitlement("alice", "no_ads")?.state == "revoked")
            let renewal = try await h.deliver(
                Fixture.notification(
                    "DID_RENEW",
                    [
                        Fixture.transaction(
                            "s2", product: "vip.month", otid: "s1", purchase: testNow,
                            expires: testNow + 30 * day, token: v1.appAccountToken)
                    ]))
            #expect(renewal.outcome == .fulfilled, "\(renewal)")
            let vip = try await h.entitlement("alice", "vip")
            #expect(vip?.expiresAt == "2026-01-31T00:00:00.000Z", "\(String(describing: vip))")
            // None of these counted as fraud.
            #expect(try await h.hash(h.keys.ledgerMeta(user: "alice")).keys.filter { $0.hasPrefix("fraud:") }.isEmpty)
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// Apple says the order's token bought another product: the user paid for it, so it is credited; the order
    /// stays unpaid.
    @Test func applesPurchaseOfAnotherProductWithAnOrdersTokenIsCreditedWithoutPayingTheOrder() async throws {
        try await LedgerHarness.with { h in
            let order = try await Fixture.order(h, user: "alice", product: "coins2000")
            let outcome = try await h.deliver(
                Fixture.notification(
                    "ONE_TIME_CHARGE", [Fixture.transaction("m1", product: "coins100", token: order.appAccountToken)]))
            #expect(outcome.outcome == .fulfilled, "\(outcome)")
            #expect(try await h.coins("alice") == 100)
            #expect(try await h.hash(h.keys.order(user: "alice", orderNo: order.orderNo))["state"] == "pending")
        }
    }

    /// One event about purchases of two users (a receipt holds every purchase of the Apple ID, whoever of the
    /// app's users submitted each): each user gets Apple's word about their own purchase, whoever the event was
    /// resolved to first.
    @Test func anEventAboutSeveralOwnersReachesEachOwner() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("a1", product: "coins100")]))
            try await h.deliver(Fixture.client("bob", [Fixture.transaction("b1", product: "coins2000")]))
            #expect(try await h.coins("bob") == 2000)

            // Apple's answer for the shared receipt: bob's purchase was refunded.
            let receipt = PurchaseEvent(
                jobId: Job.newID(), kind: .notificationV1, source: .apple, environment: "Sandbox", verifiedAt: testNow,
                transactions: [
                    Fixture.transaction("a1", product: "coins100"),
                    Fixture.transaction("b1", product: "coins2000", revoked: testNow),
                ])
            let first = try await h.deliver(receipt)
            #expect(first.outcome == .fulfilled, "\(first)")
            let forwarded = try await h.drain()
            #expect(forwarded.map(\.outcome) == [.fulfilled], "\(forwarded)")
            #expect(try await h.coins("bob") == 0)
            #expect(try await h.coins("alice") == 100)

            // A client submission holding bob's refunded purchase: alice gets nothing of it; bob's ledger hears it.
            try await h.deliver(Fixture.client("carol", [Fixture.transaction("c1", product: "coins100")]))
            try await h.deliver(
                Fixture.notification(
                    "REFUND_REVERSED", [Fixture.transaction("b1", product: "coins2000")]))
            #expect(try await h.coins("bob") == 2000)
            let presented = Fixture.client(
                "carol",
                [
                    Fixture.transaction("c1", product: "coins100"),
                    Fixture.transaction("b1", product: "coins2000", revoked: testNow + 1000),
                ])
            let mixed = try await h.deliver(presented)
            #expect(mixed.transactions?.map(\.result) == ["duplicate", "owned_by_another_user"], "\(mixed)")
            #expect(try await h.drain().map(\.outcome) == [.fulfilled])
            #expect(try await h.coins("bob") == 0)
            #expect(try await h.coins("carol") == 100)
            // The forwarded part never writes the job status of the submitter's job.
            let status = try #require(try await h.job(presented.jobId))
            #expect(status.userID == "carol")
            #expect(status.resultJSON?.contains("owned_by_another_user") == true, "\(status)")
            #expect(try await h.audit().differences.isEmpty)
        }
    }

    /// Renewal state about a subscription someone else owns is not written to the presenter's ledger (it
    /// reaches the owner's), and no entitlement appears for the presenter.
    @Test func renewalInfoOfARefusedTransactionIsNotApplied() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(
                PurchaseEvent(
                    jobId: Job.newID(), kind: .transaction, source: .client, userId: "bob", environment: "Sandbox",
                    verifiedAt: testNow, transactions: [Fixture.transaction("v1", product: "vip.month", expires: testNow + day)],
                    renewals: [
                        PurchaseEventRenewal(
                            originalTransactionId: "v1", productId: "vip.month", autoRenewStatus: 1,
                            signedDate: testNow - 1000)
                    ]))
            let receipt = PurchaseEvent(
                jobId: Job.newID(), kind: .receipt, source: .client, userId: "mallory", environment: "Sandbox",
                verifiedAt: testNow,
                transactions: [
                    Fixture.transaction("m1", product: "coins100"),
                    Fixture.transaction("v1", product: "vip.month", expires: testNow + day),
                ],
                renewals: [
                    PurchaseEventRenewal(
                        originalTransactionId: "v1", productId: "vip.month", autoRenewStatus: 0,
                        isInBillingRetryPeriod: false, signedDate: testNow)
                ])
            let outcome = try await h.deliver(receipt)
            #expect(outcome.outcome == .fulfilled, "\(outcome)")
            #expect(try await h.coins("mallory") == 100)
            let meta = try await h.hash(h.keys.ledgerMeta(user: "mallory"))
            #expect(!meta.keys.contains { $0.hasPrefix("r:vip:") }, "\(meta)")
            #expect(try await h.entitlement("mallory", "vip") == nil)
            #expect(try await h.entitlement("bob", "vip")?.autoRenew == true)
            // Apple's word (auto-renew off) reaches bob through the forwarded part.
            #expect(try await h.drain().map(\.outcome) == [.fulfilled])
            #expect(try await h.entitlement("bob", "vip")?.autoRenew == false)
        }
    }

    /// A V1 notification's own type is not evidence: only a revocation date in Apple's answer refunds.
    @Test func aV1NotificationsTypeDoesNotRefund() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(Fixture.client("alice", [Fixture.transaction("k1", product: "coins100")]))
            let claim = PurchaseEvent(
                jobId: Job.newID(), kind: .notificationV1, source: .apple, environment: "Sandbox", verifiedAt: testNow,
                transactions: [Fixture.transaction("k1", product: "coins100")],
                notification: PurchaseEventNotification(type: "REFUND", version: 1))
            try await h.deliver(claim)
            #expect(try await h.coins("alice") == 100)
        }
    }

    /// Values no real purchase has never reach the function's writes: the event is malformed (dead-lettered)
    /// and nothing is acknowledged or written.
    @Test func absurdQuantitiesAreRefusedBeforeAnythingIsWritten() async throws {
        try await LedgerHarness.with { h in
            for quantity in [0, -3, 101, 1 << 40] {
                try await h.submit(
                    Fixture.client(
                        "alice",
                        [
                            Fixture.transaction(
                                "q\(quantity)", product: "coins2000",
                                quantity: quantity)
                        ]))
                let entry = try #require(try await h.read().first)
                await #expect(throws: LedgerError.self) { try await h.apply(entry) }
            }
            #expect(try await h.pendingCount() == 4)
            #expect(try await h.coins("alice") == 0)
            #expect(try await h.redis.send("EXISTS", h.keys.account(user: "alice")).int == 0)
        }
    }
}
