import Foundation
import Ledger
import TestSupport
import Testing

/// Issue 33: an iOS app and its macOS build (two bundle IDs, each with its own App Store Server API key) on one
/// deployment, sharing one account system and one ledger. The app is always the one Apple signed; the simulator takes
/// each key for its own app only, and the verifiers confirm every StoreKit 2 transaction with Get Transaction Info, so a
/// purchase lands only when the call went out with that app's key and bundle ID.
@Suite(.tollgateSystem(twoApps: true))
struct MultiAppTests {
    @Test(.logsOnFailure) func purchasesOfBothAppsLandOnTheOneUsersLedgerAndTheirNotificationsApply() async throws {
        let system = try SystemHarness.require()
        let ingest = system.ingestClient
        let sim = system.simClient
        let user = UserToken.newUser("two-apps")
        let callsBefore = try await sim.requestCount("api.production")

        let onPhone = try await sim.purchase("com.example.coins100", type: "Consumable")
        let onMac = try await sim.purchase(
            "com.example.coins2000", type: "Consumable", extra: ["bundleId": SystemHarness.macBundleId])
        let phone = try await ingest.submitTransaction(user: user, signedTransaction: onPhone.signedTransaction)
        #expect(phone.status == "fulfilled", "\(phone)")
        let mac = try await ingest.submitTransaction(user: user, signedTransaction: onMac.signedTransaction)
        #expect(mac.status == "fulfilled", "\(mac)")
        try await system.awaitCoins(user, 2100)
        // Each confirmation went to Apple under its own app's name.
        #expect(try await sim.requestCount("api.production") >= callsBefore + 2)

        // Apple's notifications of each app arrive at the one URL and are applied to the one user.
        _ = try await sim.event("REFUND", transactionId: onMac.transactionId)
        try await system.awaitCoins(user, 100)
        _ = try await sim.event("REFUND", transactionId: onPhone.transactionId)
        try await system.awaitCoins(user, 0)
    }

    @Test(.logsOnFailure) func aPurchaseOfAnUnconfiguredAppIsRefused() async throws {
        let system = try SystemHarness.require()
        let ingest = system.ingestClient
        let sim = system.simClient
        let user = UserToken.newUser("other-app")

        // Apple signed it, for an app this deployment does not serve: refused, nothing credited.
        let other = try await sim.purchase(
            "com.example.coins2000", type: "Consumable", extra: ["bundleId": SystemHarness.otherBundleId])
        let outcome = try await ingest.submitTransaction(user: user, signedTransaction: other.signedTransaction)
        #expect(outcome.status == "rejected", "\(outcome)")
        #expect(outcome.reason == "wrong_bundle_id", "\(outcome)")
        // Its notification is refused at the door, as another app's always was.
        let door = try await ingest.postNotification(other.notificationBody)
        #expect(door.status == 403, "\(door.status) \(door.text)")
        #expect(door.text.contains("wrong_bundle_id"), "\(door.text)")
        #expect(try await ingest.entitlements(user: user).coins == 0)
    }

    @Test(.logsOnFailure) func oneAppsIdentityCannotBeBorrowedForAnother() async throws {
        let system = try SystemHarness.require()
        let ingest = system.ingestClient
        let sim = system.simClient
        // A notification Apple signed for the Mac app, naming the iOS app's Apple ID: each app is checked against its
        // own Apple ID, so knowing both does not make a mixed one pass.
        let payload: [String: Any] = [
            "notificationType": "TEST", "notificationUUID": UUID().uuidString.lowercased(), "version": "2.0",
            "signedDate": Int64(Date().timeIntervalSince1970 * 1000),
            "data": ["bundleId": SystemHarness.macBundleId, "environment": "Production", "appAppleId": 1_234_567_890],
        ]
        let signed = try await sim.sign(payload)
        let door = try await ingest.postNotification(Data(#"{"signedPayload":"\#(signed)"}"#.utf8))
        #expect(door.status == 403, "\(door.status) \(door.text)")
        #expect(door.text.contains("wrong_app_apple_id"), "\(door.text)")
    }

    /// Tollgate calls Apple about an app with that app's key: the right file works, and a file naming the iOS app's
    /// key for the Mac app gets the simulator's refusal (Apple's 401), as Apple would answer.
    @Test(.logsOnFailure) func theServerAPIAcceptsOnlyTheAppsOwnKey() async throws {
        let system = try SystemHarness.require()
        let sim = system.simClient
        let onMac = try await sim.purchase(
            "com.example.noads", type: "Non-Consumable", extra: ["bundleId": SystemHarness.macBundleId])
        let apps = system.directory.appendingPathComponent("apps.json").path
        let right = try await system.tollctlAsVerifier(["apple", "app-transaction", onMac.transactionId], apps: apps)
        #expect(right.status == 0, "\(right.output)")
        #expect(right.output.contains("bundle \(SystemHarness.macBundleId)"), "\(right.output)")

        let mixedUp = system.directory.appendingPathComponent("apps-mixed-up.json").path
        let wrong = try await system.tollctlAsVerifier(["apple", "app-transaction", onMac.transactionId], apps: mixedUp)
        #expect(wrong.status != 0, "\(wrong.output)")
        #expect(wrong.output.contains("401") || wrong.output.lowercased().contains("unauthorized"), "\(wrong.output)")
    }
}
