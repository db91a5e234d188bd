import AppStore
@preconcurrency import Crypto
import Foundation
import Testing

@testable import appstore_sim

@Suite("events")
struct EventTests {
    @Test func familyRevocationExpiryResubscribeAndRenewalPreference() async throws {
        try await SimHarness.with { sim in
            let verifier = try SignedDataTests.verifier(roots: [try await sim.rootDER()])
            func transaction(_ response: [String: Any]) async throws -> JWSTransactionDecodedPayload {
                try #require(await verifier.verifyTransaction(response["signedTransaction"] as? String ?? "").value)
            }

            let shared = try await sim.purchase(
                type: "Non-Consumable", productId: "com.example.noads", extra: ["inAppOwnershipType": "FAMILY_SHARED"])
            let revoked = try await transaction(try await sim.event("REVOKE", shared.transactionId))
            #expect(revoked.revocationType == .familyRevoke)
            #expect(revoked.revocationDate != nil)
            #expect(revoked.inAppOwnershipType == .familyShared)
            #expect(revoked.revocationPercentage == nil)

            let coins = try await sim.purchase(type: "Consumable", productId: "com.example.coins100")
            let prorated = try await transaction(
                try await sim.event("REFUND", coins.transactionId, extra: ["revocationPercentage": 40_000]))
            #expect(prorated.revocationType == .refundProrated && prorated.revocationPercentage == 40_000)
            let restored = try await transaction(try await sim.event("REFUND_REVERSED", coins.transactionId))
            #expect(restored.revocationType == nil && restored.revocationPercentage == nil)
            let full = try await transaction(try await sim.event("REFUND", coins.transactionId))
            #expect(full.revocationType == .refundFull && full.revocationPercentage == 100_000)

            let vip = try await sim.purchase(
                type: "Auto-Renewable Subscription", productId: "com.example.vip.month", extra: ["expiresInSeconds": 300])
            let preference = try await sim.event(
                "DID_CHANGE_RENEWAL_PREF", vip.transactionId, subtype: "UPGRADE", extra: ["productId": "com.example.vip.year"])
            #expect(preference["subtype"] as? String == "UPGRADE")
            let renewal = try await transaction(try await sim.event("DID_RENEW", vip.transactionId))
            #expect(renewal.productId == "com.example.vip.year")
            #expect(renewal.originalTransactionId == vip.transactionId)
            #expect(renewal.transactionReason == .renewal)
            #expect((renewal.expiresDate ?? 0) - (renewal.purchaseDate ?? 0) >= 300_000)

            let extended = try await transaction(try await sim.event("RENEWAL_EXTENDED", vip.transactionId, extra: ["extendByDays": 2]))
            #expect(extended.expiresDate == (renewal.expiresDate ?? 0) + 2 * 86_400_000)

            let expiry = try await sim.event("EXPIRED", vip.transactionId, subtype: "BILLING_RETRY")
            #expect(expiry["subtype"] as? String == "BILLING_RETRY")
            let renewAfterExpiry = try await sim.post("/sim/events", ["type": "DID_RENEW", "transactionId": vip.transactionId])
            #expect(renewAfterExpiry.status == 409)
            let back = try await sim.event("SUBSCRIBED", vip.transactionId, subtype: "RESUBSCRIBE")
            #expect(back["notificationType"] as? String == "SUBSCRIBED")
            let resubscribed = try await transaction(back)
            #expect(resubscribed.transactionReason == .purchase)
            #expect((resubscribed.expiresDate ?? 0) > Int64(Date().timeIntervalSince1970 * 1000))

            let recovering = try await sim.purchase(type: "Auto-Renewable Subscription", productId: "com.example.vip.month")
            try await sim.event("DID_FAIL_TO_RENEW", recovering.transactionId)
            let recovered = try await sim.event("DID_RENEW", recovering.transactionId)
            #expect(recovered["subtype"] as? String == "BILLING_RECOVERY")
        }
    }
}
