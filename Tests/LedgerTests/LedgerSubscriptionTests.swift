import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@Suite struct LedgerSubscriptionTests {
    func renewal(auto: Int? = 1, retry: Bool = false, grace: Int64? = nil, signed: Int64) -> PurchaseEventRenewal {
        PurchaseEventRenewal(
            originalTransactionId: "s1", productId: "vip.month", autoRenewStatus: auto,
            isInBillingRetryPeriod: retry, gracePeriodExpiresDate: grace, signedDate: signed)
    }

    @Test func expiryIsTheLatestExpiresDateAndStaleNotificationsDoNotRollBack() async throws {
        try await LedgerHarness.with { h in
            var first = Fixture.client(
                "alice",
                [
                    Fixture.transaction(
                        "s1", product: "vip.month", purchase: testNow - 10 * day, expires: testNow + 20 * day, signed: testNow - 10 * day)
                ])
            first.renewals = [renewal(signed: testNow - 10 * day)]
            try await h.deliver(first)
            var vip = try #require(try await h.entitlement("alice", "vip"))
            #expect(vip.state == "active" && vip.autoRenew)

            try await h.deliver(
                Fixture.notification(
                    "DID_RENEW",
                    [
                        Fixture.transaction(
                            "s2", product: "vip.month", otid: "s1", purchase: testNow, expires: testNow + 50 * day, signed: testNow)
                    ],
                    renewals: [renewal(signed: testNow)], signed: testNow))
            let expires = String(testNow + 50 * day)
            #expect(try await h.hash(h.keys.account(user: "alice"))["ent:vip:expires"] == expires)

            // Older notifications arrive late: auto-renew off and the first period's EXPIRED.
            try await h.deliver(
                Fixture.notification(
                    "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", [],
                    renewals: [renewal(auto: 0, signed: testNow - 5 * day)], signed: testNow - 5 * day))
            try await h.deliver(
                Fixture.notification(
                    "EXPIRED",
                    [
                        Fixture.transaction(
                            "s1", product: "vip.month", purchase: testNow - 10 * day, expires: testNow + 20 * day, signed: testNow - 4 * day
                        )
                    ],
                    renewals: [renewal(auto: 0, signed: testNow - 4 * day)], signed: testNow - 4 * day))
            vip = try #require(try await h.entitlement("alice", "vip"))
            #expect(vip.state == "active" && vip.autoRenew)
            #expect(try await h.hash(h.keys.account(user: "alice"))["ent:vip:expires"] == expires)

            // A newer one does apply.
            try await h.deliver(
                Fixture.notification(
                    "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", [],
                    renewals: [renewal(auto: 0, signed: testNow + 1000)], signed: testNow + 1000))
            #expect(try await h.entitlement("alice", "vip")?.autoRenew == false)
        }
    }

    @Test func gracePeriodThenBillingRetryThenExpired() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(
                Fixture.client(
                    "alice",
                    [
                        Fixture.transaction(
                            "s1", product: "vip.month", purchase: testNow - 31 * day, expires: testNow - day)
                    ]))
            #expect(try await h.entitlement("alice", "vip")?.state == "expired")
            try await h.deliver(
                Fixture.notification(
                    "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", [],
                    renewals: [renewal(retry: true, grace: testNow + 5 * day, signed: testNow - 3000)]))
            let grace = try #require(try await h.entitlement("alice", "vip"))
            #expect(grace.state == "gracePeriod")
            #expect(try await h.hash(h.keys.account(user: "alice"))["ent:vip:expires"] == String(testNow + 5 * day))
            try await h.deliver(
                Fixture.notification(
                    "GRACE_PERIOD_EXPIRED", [],
                    renewals: [renewal(retry: true, signed: testNow - 2000)]))
            #expect(try await h.entitlement("alice", "vip")?.state == "billingRetry")
            try await h.deliver(
                Fixture.notification(
                    "EXPIRED", subtype: "BILLING_RETRY", [],
                    renewals: [renewal(auto: 0, retry: false, signed: testNow - 1000)]))
            #expect(try await h.entitlement("alice", "vip")?.state == "expired")
        }
    }

    @Test func aRevokedSubscriptionIsRevoked() async throws {
        try await LedgerHarness.with { h in
            try await h.deliver(
                Fixture.client(
                    "alice",
                    [
                        Fixture.transaction(
                            "s1", product: "vip.month", expires: testNow + 29 * day)
                    ]))
            try await h.deliver(
                Fixture.notification(
                    "REVOKE",
                    [
                        Fixture.transaction(
                            "s1", product: "vip.month", expires: testNow + 29 * day, revoked: testNow)
                    ]))
            #expect(try await h.entitlement("alice", "vip")?.state == "revoked")
        }
    }
}
