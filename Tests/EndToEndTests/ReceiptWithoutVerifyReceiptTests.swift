import Foundation
import Ledger
import Testing

extension TollgateSystemTests {
    /// Issue 14 item 3: with `verifyReceipt` unreachable, the real services fulfil an app receipt (PKCS#7, signed by
    /// the simulator's CA) from the App Store Server API, exactly once; the subscription renews and a refund still
    /// takes the coins back.
    @Suite struct ReceiptWithoutVerifyReceiptTests {
        @Test(.logsOnFailure) func aReceiptIsFulfilledFromTheServerAPIAndRefundedOnce() async throws {
            try await SystemHarness.with(.init(replicas: 1, serverAPI: true, withoutVerifyReceipt: true)) { system in
                let ingest = system.ingestClient
                let sim = system.simClient
                let user = UserToken.newUser("server-api-receipt")
                let order = try await ingest.createOrder(user: user, productId: "com.example.coins100")
                let coins = try await sim.purchase(
                    "com.example.coins100", type: "Consumable", appAccountToken: order.appAccountToken, extra: ["quantity": 2])
                let vip = try await sim.purchase(
                    "com.example.vip.month", type: "Auto-Renewable Subscription",
                    extra: ["receipt": try #require(coins.receipt)])
                let receipt = try #require(vip.receipt)

                let first = try await ingest.submitReceipt(user: user, receipt: receipt, orderNo: order.orderNo)
                #expect(first.status == "fulfilled", "\(first)")
                // Both purchases; the coins may already have come through Apple's ONE_TIME_CHARGE (their order's token).
                #expect(first.transactionResults.count == 2, "\(first)")
                #expect(first.transactionResults.allSatisfy { ["applied", "duplicate"].contains($0) }, "\(first)")
                try await system.awaitCoins(user, 200)
                #expect(try await ingest.entitlements(user: user).coins == 200)
                _ = try await system.awaitEntitlement(user, "vip", "active")

                // The same receipt again is the same job; an older receipt naming the coins credits nothing more.
                let again = try await ingest.submitReceipt(user: user, receipt: receipt, orderNo: order.orderNo)
                #expect(again.jobId == first.jobId)
                let older = try await ingest.submitReceipt(user: user, receipt: try #require(coins.receipt))
                #expect(older.status == "fulfilled", "\(older)")
                #expect(older.transactionResults == ["duplicate"], "\(older)")

                // A renewal: Apple's DID_RENEW moves the membership's end to the new period's.
                let renewed = try await sim.event("DID_RENEW", transactionId: vip.transactionId)
                _ = try await system.awaitEntitlement(user, "vip", "active", expiresAt: try #require(renewed.expiresDate))

                _ = try await sim.event("REFUND", transactionId: coins.transactionId)
                try await system.awaitCoins(user, 0)
                try await system.expectAuditClean()
                #expect(try await sim.requestCount("verifyReceipt.production") == 0)
            }
        }
    }
}
