import Foundation
import Ledger
import Redis
import TestSupport
import Testing

extension TollgateSystemTests {
    /// Refunds reverse a purchase exactly once; a refund reversal re-applies it exactly once.
    @Suite struct RefundTests {
        @Test(.logsOnFailure) func aRefundTakesTheCoinsBackAndItsReversalGivesThemBack() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let sim = system.simClient
            let user = UserToken.newUser("refund")
            let purchase = try await sim.purchase("com.example.coins100", type: "Consumable")
            let bought = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(bought.status == "fulfilled", "\(bought)")
            try await system.awaitCoins(user, 100)

            _ = try await sim.event("REFUND", transactionId: purchase.transactionId)
            try await system.awaitCoins(user, 0)
            // The receipt as it was before the refund is still the same transaction: nothing is credited again.
            let stale = try await ingest.submitReceipt(user: user, receipt: try #require(purchase.receipt))
            #expect(stale.status == "fulfilled", "\(stale)")
            #expect(try await ingest.entitlements(user: user).coins == 0)

            _ = try await sim.event("REFUND_REVERSED", transactionId: purchase.transactionId)
            try await system.awaitCoins(user, 100)
            let report = try await system.tollctlUser(user)
            #expect(report.contains("state=applied"), "\(report)")

            // The app's backend pulls the three changes over HTTP, in seq order, with Apple's price.
            let events = try await ingest.events(user: user)
            #expect(events.map(\.seq) == [1, 2, 3])
            #expect(events.map(\.type) == ["purchase", "refund", "refund_reversed"])
            #expect(events.map(\.balance) == [100, 0, 100])
            #expect(events.allSatisfy { $0.transactionId == purchase.transactionId })
            #expect(events[0].price != nil && events[0].currency != nil, "the simulator signs a price and currency")
            #expect(try await ingest.events(user: user, after: 2).map(\.seq) == [3])
            try await system.expectAuditClean()
        }

        @Test(.logsOnFailure) func aProratedRefundTakesBackItsShareOnceAndShowsIt() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let sim = system.simClient
            let user = UserToken.newUser("prorated")
            let purchase = try await sim.purchase("com.example.coins100", type: "Consumable", extra: ["quantity": 3])
            let bought = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(bought.status == "fulfilled", "\(bought)")
            try await system.awaitCoins(user, 300)

            // Apple refunds 1 of 3: 33.333 % of 300 coins = 99.999, rounded down.
            _ = try await sim.event("REFUND", transactionId: purchase.transactionId, extra: ["revocationPercentage": 33_333])
            try await system.awaitCoins(user, 201)
            // The purchase submitted again (Apple's signed transaction as it was bought) credits nothing.
            let again = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(again.status == "fulfilled", "\(again)")
            #expect(try await ingest.entitlements(user: user).coins == 201)
            let report = try await system.tollctlUser(user)
            #expect(report.contains("revocationType=REFUND_PRORATED"), "\(report)")
            #expect(report.contains("revocationPercentage=33333") && report.contains("debited=99"), "\(report)")
            let refunds = try await system.redis.entries(of: "events").filter {
                $0.string("user") == user && $0.string("reason") == "refund"
            }
            #expect(refunds.count == 1)
            #expect(refunds.first?.string("delta") == "-99")
            #expect(refunds.first?.string("revocationType") == "REFUND_PRORATED")
            #expect(refunds.first?.string("revocationPercentage") == "33333")
            try await system.expectAuditClean()
        }

        @Test(.logsOnFailure) func aRefundRevokesAnUnlockAndItsReversalRestoresIt() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let sim = system.simClient
            let user = UserToken.newUser("noads")
            let order = try await ingest.createOrder(user: user, productId: "com.example.noads")
            let purchase = try await sim.purchase(
                "com.example.noads", type: "Non-Consumable",
                appAccountToken: order.appAccountToken)
            let bought = try await ingest.submitReceipt(
                user: user, receipt: try #require(purchase.receipt),
                orderNo: order.orderNo)
            #expect(bought.status == "fulfilled", "\(bought)")
            try await system.awaitEntitlement(user, "no_ads", "active")

            _ = try await sim.event("REFUND", transactionId: purchase.transactionId)
            try await system.awaitEntitlement(user, "no_ads", "revoked")
            _ = try await sim.event("REFUND_REVERSED", transactionId: purchase.transactionId)
            try await system.awaitEntitlement(user, "no_ads", "active")
            #expect(try await ingest.entitlements(user: user).coins == 0)
            try await system.expectAuditClean()
        }

        @Test(.logsOnFailure) func aRefundedSubscriptionIsRevokedAndTheReversalReactivatesIt() async throws {
            let system = try SystemHarness.require()
            let sim = system.simClient
            let user = UserToken.newUser("vip-refund")
            let purchase = try await sim.purchase("com.example.vip.month", type: "Auto-Renewable Subscription")
            let bought = try await system.ingestClient.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(bought.status == "fulfilled", "\(bought)")
            let expires = try #require(purchase.expiresDate)
            try await system.awaitEntitlement(user, "vip", "active", expiresAt: expires)

            _ = try await sim.event("REFUND", transactionId: purchase.transactionId)
            try await system.awaitEntitlement(user, "vip", "revoked")
            _ = try await sim.event("REFUND_REVERSED", transactionId: purchase.transactionId)
            try await system.awaitEntitlement(user, "vip", "active", expiresAt: expires)
            try await system.expectAuditClean()
        }
    }
}
