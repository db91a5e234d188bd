import AppStore
import Foundation
import Ledger
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// A renewal that produced no notification at all is found by the subscription sweeper (Get All
/// Subscription Statuses once the period ended), verified, and extends the membership in the ledger.
@Suite(.serialized)
struct SweeperTests {
    typealias Support = ReconcileTestSupport

    @Test func silentRenewalIsFoundAndExtendsTheMembership() async throws {
        try await VerifierHarness.with { harness in
            // The purchase's own SUBSCRIBED notification is never delivered either; the reconciler recovers it,
            // so the ledger knows the subscription (with auto-renew on) whenever it gets to apply it.
            try await Support.bindToken(harness)
            let vip = try await harness.sim.purchase([
                "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": 4,
                "appAccountToken": Support.token,
            ])
            let vipID = try #require(vip["transactionId"] as? String)
            let signed = try #require(vip["signedTransaction"] as? String)
            let firstExpiry = try #require(NotificationPeekTestView.expires(of: signed))
            try await Support.withFulfiller(harness) {
                try await harness.withVerifier(try Support.settings(harness)) { _ in
                    // Apple renews and tells nobody: no notification, nothing in Notification History.
                    let renewal = try await harness.sim.post(
                        "/sim/events",
                        [
                            "type": "DID_RENEW", "transactionId": vipID, "expiresInSeconds": 3600, "notify": false,
                        ])
                    #expect(renewal["notificationUUID"] == nil)
                    let renewedID = try #require(renewal["transactionId"] as? String)
                    let renewedSigned = try #require(renewal["signedTransaction"] as? String)
                    let renewedUntil = try #require(NotificationPeekTestView.expires(of: renewedSigned))
                    #expect(renewedUntil >= firstExpiry + 3_600_000)

                    let extended = try await eventually {
                        try await Support.account(harness)["ent:vip:expires"] == String(renewedUntil)
                    }
                    #expect(extended, "the sweeper never extended the membership")
                    // The ledger knew the first period (it was due at its end) before the sweeper corrected it.
                    let recovered = try await Support.appliedNotifications(harness)
                    #expect(recovered == [try #require(vip["notificationUUID"] as? String)])
                    let account = try await Support.account(harness)
                    #expect(account["ent:vip:state"] == "active")
                    #expect(account["ent:vip:autorenew"] == "1")
                    let record = try await Support.hash(harness, harness.keys.transaction(user: Support.user, transactionId: renewedID))
                    #expect(record["state"] == "applied")
                    // One event, from the sweeper, applied (the record of the renewal and auto-renew above are its).
                    let swept = try await Support.sweptJobs(harness)
                    #expect(swept.count == 1 && swept.first?.kind == .transaction, "\(swept)")
                    #expect(swept.first?.state == .fulfilled && swept.first?.verifiedAtMilliseconds != nil)
                    let next = try await harness.redis.send("ZSCORE", harness.keys.subscriptionsDue(), #"["Production","vip","user-1"]"#)
                        .int
                    #expect(next == renewedUntil)
                }
            }
        }
    }

    @Test func withoutAnAPIKeyTheStoredReceiptIsVerifiedAgain() async throws {
        try await VerifierHarness.with { harness in
            let vip = try await harness.sim.purchase([
                "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription", "expiresInSeconds": 6,
            ])
            let vipID = try #require(vip["transactionId"] as? String)
            let receipt = try #require(vip["receipt"] as? String)
            let settings = [
                "TOLLGATE_SHARED_SECRET": "secret", "TOLLGATE_RECONCILE_INTERVAL": "300ms", "TOLLGATE_SWEEP_GRACE": "0ms",
                "TOLLGATE_RECONCILE_START_DELAY": "0ms",
                "TOLLGATE_RECONCILE_LEASE": "10s",
            ]
            try await Support.withFulfiller(harness) {
                try await harness.withVerifier(settings) { _ in
                    try await harness.enqueue(kind: .receipt, payload: receipt, user: Support.user)
                    let applied = try await eventually {
                        try await Support.account(harness)["ent:vip:expires"] != nil
                    }
                    try #require(applied, "the receipt was never applied")
                    let first = try #require(Int64(try await Support.account(harness)["ent:vip:expires"] ?? ""))
                    let stored = try await Support.hash(harness, ReceiptReference.key(harness.keys, user: Support.user))
                    #expect(stored["receipt"]?.isEmpty == false)

                    try await harness.sim.post(
                        "/sim/events",
                        [
                            "type": "DID_RENEW", "transactionId": vipID, "expiresInSeconds": 3600, "notify": false,
                        ])
                    let extended = try await eventually {
                        (Int64(try await Support.account(harness)["ent:vip:expires"] ?? "") ?? 0) >= first + 3_600_000
                    }
                    #expect(extended, "the sweeper never extended the membership from the receipt")
                    #expect(try await Support.account(harness)["ent:vip:state"] == "active")
                    let swept = try await Support.sweptJobs(harness)
                    #expect(swept.count == 1 && swept.first?.kind == .receipt && swept.first?.userID == Support.user, "\(swept)")
                }
            }
        }
    }
}
