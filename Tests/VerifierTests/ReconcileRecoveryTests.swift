import AppStore
import Core
import Foundation
import Logging
import Pipeline
import Redis
import TestSupport
import Testing

@testable import Verification

/// Notifications Apple recorded but never delivered (the simulator has no notify URL) are recovered from
/// Get Notification History by the reconciler and applied exactly once — also when passes repeat and when
/// two verifier replicas race for the lease.
@Suite(.serialized)
struct ReconcileRecoveryTests {
    typealias Support = ReconcileTestSupport

    /// A coin purchase, a subscription and its renewal, each notified to nobody; returns the three UUIDs and
    /// the renewal's expiry.
    static func undeliveredPurchases(_ harness: VerifierHarness) async throws -> (uuids: Set<String>, renewedUntil: Int64) {
        try await Support.bindToken(harness)
        let coins = try await harness.sim.purchase(["appAccountToken": Support.token])
        let vip = try await harness.sim.purchase([
            "productId": "com.example.vip.month", "type": "Auto-Renewable Subscription",
            "appAccountToken": Support.token, "expiresInSeconds": 3600,
        ])
        let vipID = try #require(vip["transactionId"] as? String)
        let renewal = try await harness.sim.post("/sim/events", ["type": "DID_RENEW", "transactionId": vipID])
        var uuids: Set<String> = []
        for answer in [coins, vip, renewal] {
            #expect(answer["deliveryStatus"] as? String == "disabled")
            uuids.insert(try #require(answer["notificationUUID"] as? String))
        }
        let signed = try #require(renewal["signedTransaction"] as? String)
        let claims = try #require(NotificationPeekTestView.expires(of: signed))
        return (uuids, claims)
    }

    @Test func neverDeliveredNotificationsAreRecoveredAndAppliedOnceAcrossRepeatedPasses() async throws {
        try await VerifierHarness.with { harness in
            let (uuids, renewedUntil) = try await Self.undeliveredPurchases(harness)
            try await Support.withFulfiller(harness) {
                try await harness.withVerifier(try Support.settings(harness)) { _ in
                    let applied = try await eventually {
                        try await Support.appliedNotifications(harness) == uuids
                    }
                    #expect(applied, "the ledger's notification set never held all three recovered UUIDs")
                    // Let the reconciler run several more passes over the same history.
                    let first = try await Support.nextPass(harness, after: 0)
                    let repeated = try await eventually {
                        (try await Support.lastPass(harness) ?? 0) > first + 600
                    }
                    #expect(repeated, "the reconciler did not pass again")
                    let account = try await Support.account(harness)
                    #expect(account["coins"] == "100")
                    #expect(account["ent:vip:state"] == "active")
                    #expect(account["ent:vip:expires"] == String(renewedUntil))
                    #expect(try await Support.jobStates(harness) == ["fulfilled", "fulfilled", "fulfilled"])
                }
            }
            // Once more by hand over the whole history: everything is known to the ledger, nothing is enqueued.
            let configuration = try VerifierConfiguration(environment: harness.environment(try Support.settings(harness)))
            let report = try await ReconcileOnce.run(
                configuration: configuration, arguments: .init(since: Date().addingTimeInterval(-3600)), logger: harness.logger)
            #expect(report.found == 3)
            #expect(report.applied == 3)
            #expect(report.enqueued == 0)
            #expect(try await harness.jobCount() == 3)
            #expect(try await Support.account(harness)["coins"] == "100")
        }
    }

    @Test func twoReplicasRacingForTheLeaseApplyEachNotificationOnce() async throws {
        try await VerifierHarness.with { harness in
            let (uuids, _) = try await Self.undeliveredPurchases(harness)
            try await Support.withFulfiller(harness) {
                let settings = try Support.settings(harness, interval: "200ms")
                try await harness.withVerifier(settings) { _ in
                    try await harness.withVerifier(settings) { _ in
                        let applied = try await eventually {
                            try await Support.appliedNotifications(harness) == uuids
                        }
                        #expect(applied)
                        let first = try await Support.nextPass(harness, after: 0)
                        _ = try await eventually { (try await Support.lastPass(harness) ?? 0) > first + 400 }
                    }
                }
            }
            #expect(try await Support.account(harness)["coins"] == "100")
            #expect(try await harness.jobCount() == 3)
            let seen = try await harness.redis.send("KEYS", "tg:{p0}:reconcile:seen:*").array ?? []
            #expect(seen.count == 3)
        }
    }
}

/// Reads a signed transaction's `expiresDate` without verifying (the test made it).
enum NotificationPeekTestView {
    static func expires(of jws: String) -> Int64? {
        let parts = jws.split(separator: ".")
        guard parts.count == 3, let bytes = Base64URL.decode(parts[1]), let expires = JSONValue.read(bytes)?["expiresDate"]?.int
        else { return nil }
        return Int64(expires)
    }
}
