import Foundation
import Ledger
import Testing

extension TollgateSystemTests {
    /// An auto-renewable subscription through its life, driven by Apple's notifications only.
    @Suite struct SubscriptionTests {
        static let product = "com.example.vip.month"
        /// A month-long period, where the test checks an `active` state.
        static var month: [String: Any] { ["expiresInSeconds": 30 * 86_400] }

        /// The simulator's renewals chain each period from the previous end, and a failed renewal ends only
        /// the latest period; so that no earlier period still runs when billing fails (as with Apple, where a
        /// renewal happens when the period ends), the first periods are one second long.
        @Test(.logsOnFailure) func aSubscriptionFollowsRenewalsBillingRetryGracePeriodExpiryAndResubscription() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let sim = system.simClient
            let user = UserToken.newUser("vip")
            let order = try await ingest.createOrder(user: user, productId: Self.product)
            let bought = try await sim.purchase(
                Self.product, type: "Auto-Renewable Subscription",
                appAccountToken: order.appAccountToken, extra: ["expiresInSeconds": 1])
            let id = bought.originalTransactionId
            // SUBSCRIBED/INITIAL_BUY reaches the ledger through ingest; the appAccountToken names the user.
            try await awaitPeriod(system, user, ends: try #require(bought.expiresDate))
            let paid = try await ingest.submitTransaction(
                user: user, signedTransaction: bought.signedTransaction,
                orderNo: order.orderNo)
            #expect(paid.status == "fulfilled", "\(paid)")

            var expires = try #require(bought.expiresDate)
            var earlierPeriodsEnd = expires
            for renewal in 1...3 {
                let period: [String: Any] = renewal < 3 ? ["expiresInSeconds": 1] : Self.month
                earlierPeriodsEnd = expires
                let renewed = try await sim.event("DID_RENEW", transactionId: id, extra: period)
                let next = try #require(renewed.expiresDate)
                #expect(next > expires)
                expires = next
                try await awaitPeriod(system, user, ends: expires)
            }
            try await system.awaitEntitlement(user, "vip", "active", expiresAt: expires, autoRenew: true)
            let earlierEnd = Date(timeIntervalSince1970: Double(earlierPeriodsEnd) / 1000 + 0.2)
            try await Task.sleep(for: .seconds(max(0, earlierEnd.timeIntervalSinceNow)))

            // Billing retry: the period ends unpaid, Apple keeps trying; then the retry succeeds.
            let failed = try await sim.event("DID_FAIL_TO_RENEW", transactionId: id)
            let failedEnd = try #require(failed.expiresDate)
            try await system.awaitEntitlement(user, "vip", "billingRetry", expiresAt: failedEnd)
            let recovered = try await sim.event("DID_RENEW", transactionId: id, extra: Self.month)
            let recoveredEnd = try #require(recovered.expiresDate)
            try await system.awaitEntitlement(user, "vip", "active", expiresAt: recoveredEnd, autoRenew: true)

            // Grace period: access continues until the grace period ends, then billing retry.
            let grace = try await sim.event(
                "DID_FAIL_TO_RENEW", subtype: "GRACE_PERIOD", transactionId: id,
                extra: ["gracePeriodSeconds": 3600])
            let graceEnd = try #require(grace.expiresDate) + 3_600_000
            try await system.awaitEntitlement(user, "vip", "gracePeriod", expiresAt: graceEnd)
            _ = try await sim.event("GRACE_PERIOD_EXPIRED", transactionId: id)
            try await system.awaitEntitlement(user, "vip", "billingRetry")

            // Billing retry gives up: expired, no auto-renew.
            let expired = try await sim.event("EXPIRED", subtype: "BILLING_RETRY", transactionId: id)
            let expiredEnd = try #require(expired.expiresDate)
            try await system.awaitEntitlement(user, "vip", "expired", expiresAt: expiredEnd, autoRenew: false)

            // The customer comes back.
            let back = try await sim.event("SUBSCRIBED", subtype: "RESUBSCRIBE", transactionId: id, extra: Self.month)
            #expect(back.transactionId != id)
            let backEnd = try #require(back.expiresDate)
            try await system.awaitEntitlement(user, "vip", "active", expiresAt: backEnd, autoRenew: true)

            let view = try await ingest.entitlements(user: user)
            #expect(view.coins == 0)
            #expect(view.entitlements.map(\.entitlement) == ["vip"])
            // Initial purchase, three renewals, the billing recovery and the resubscription: six transactions.
            let report = try await system.tollctlUser(user)
            #expect(report.contains("transactions 6"), "\(report)")
            try await system.expectAuditClean()
        }

        /// A one-second period: the ledger has it once `expiresAt` is its end; the entitlement reads `active`
        /// until then and `expired` after, so either state is right.
        private func awaitPeriod(
            _ system: SystemHarness, _ user: String, ends: Int64,
            sourceLocation: SourceLocation = #_sourceLocation
        ) async throws {
            let expected = SystemHarness.iso8601(ends)
            try await system.awaitLedger(user, "vip period until \(expected)", sourceLocation: sourceLocation) { view in
                view.entitlements.contains {
                    $0.entitlement == "vip" && $0.expiresAt == expected && ["active", "expired"].contains($0.state)
                }
            }
        }
    }
}
