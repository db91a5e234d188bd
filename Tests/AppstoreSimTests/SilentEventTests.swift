import AppStore
import Foundation
import Testing

@testable import appstore_sim

/// `"notify": false` on `POST /sim/events`: Apple's state changes, but no notification exists anywhere.
@Suite("silent events")
struct SilentEventTests {
    @Test func renewalWithoutNotificationChangesStateButRecordsNothing() async throws {
        try await SimHarness.with { sim in
            let verifier = try SignedDataTests.verifier(roots: [try await sim.rootDER()])
            let vip = try await sim.purchase(
                type: "Auto-Renewable Subscription", productId: "com.example.vip.month", extra: ["expiresInSeconds": 300])
            let before = try await sim.get("/sim/notifications")
            let recorded = (before.body["notifications"] as? [Any])?.count ?? -1

            let silent = try await sim.event("DID_RENEW", vip.transactionId, extra: ["notify": false])
            #expect(silent["notificationUUID"] == nil)
            #expect(silent["signedPayload"] == nil)
            #expect(silent["deliveryStatus"] as? String == "not_sent")
            let renewal = try #require(await verifier.verifyTransaction(silent["signedTransaction"] as? String ?? "").value)
            #expect(renewal.originalTransactionId == vip.transactionId)
            #expect(renewal.transactionId != vip.transactionId)
            #expect(renewal.transactionReason == .renewal)

            let after = try await sim.get("/sim/notifications")
            #expect((after.body["notifications"] as? [Any])?.count == recorded)

            let loud = try await sim.event("DID_RENEW", vip.transactionId)
            #expect(loud["notificationUUID"] is String)
            let latest = try await sim.get("/sim/notifications")
            #expect((latest.body["notifications"] as? [Any])?.count == recorded + 1)
        }
    }
}
