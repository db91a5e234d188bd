import AppStore
import AppStoreTesting
import Foundation
import Testing

@testable import appstore_sim

@Suite("signed data")
struct SignedDataTests {
    static func verifier(roots: [Data], environment: AppStoreEnvironment = .production) throws -> SignedDataVerifier {
        try SignedDataVerifier(
            configuration: SignedDataVerifierConfiguration(
                rootCertificates: roots, bundleId: "com.example.app", environment: environment, appAppleId: 1_234_567_890))
    }

    @Test func transactionAndNotificationVerifyWithTheSimulatorsRootOnly() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase(extra: ["appAccountToken": "7E3FB20B-4CDB-47CC-936D-99D65F608138"])
            let root = try await sim.rootDER()
            #expect(root == sim.authority.rootDER)

            let trusting = try Self.verifier(roots: [root])
            let transaction = try #require(await trusting.verifyTransaction(purchase.signedTransaction).value)
            #expect(transaction.transactionId == purchase.transactionId)
            #expect(transaction.type == .consumable)
            #expect(transaction.environment == .production)
            #expect(transaction.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")

            let notification = try #require(await trusting.verifyNotification(purchase.signedPayload).value)
            #expect(notification.payload.notificationType == .oneTimeCharge)
            #expect(notification.payload.notificationUUID == purchase.notificationUUID)
            #expect(notification.payload.version == "2.0")
            #expect(notification.payload.data?.bundleId == "com.example.app")
            #expect(notification.payload.data?.appAppleId == 1_234_567_890)
            #expect(notification.transaction?.payload.transactionId == purchase.transactionId)

            let appleOnly = try Self.verifier(roots: [AppleRootCertificates.appleRootCAG3])
            #expect(await appleOnly.verifyTransaction(purchase.signedTransaction).failure?.code == .invalidChain)
            #expect(await appleOnly.verifyNotification(purchase.signedPayload).failure?.code == .invalidChain)
        }
    }

    /// `RESCIND_CONSENT` carries `appData` with the customer's app transaction, both signed by the simulator's CA;
    /// it is recorded (Notification History, `/sim/notifications`) like every other notification.
    @Test func rescindConsentCarriesAppDataWithASignedAppTransaction() async throws {
        try await SimHarness.with { sim in
            let answer = try await sim.post(
                "/sim/notifications/rescind-consent", ["environment": "Sandbox", "appTransactionId": "704289572311039393"])
            #expect(answer.status == 201)
            #expect(answer.body["appTransactionId"] as? String == "704289572311039393")
            let payload = try #require(answer.body["signedPayload"] as? String)
            let verifier = try Self.verifier(roots: [try await sim.rootDER()], environment: .sandbox)
            let verified = try #require(await verifier.verifyNotification(payload).value)
            #expect(verified.payload.notificationType == .rescindConsent)
            #expect(verified.payload.data == nil)
            #expect(verified.payload.appData?.bundleId == "com.example.app")
            #expect(verified.payload.appData?.appAppleId == 1_234_567_890)
            #expect(verified.payload.appData?.environment == .sandbox)
            let app = try #require(verified.appTransaction?.payload)
            #expect(app.appTransactionId == "704289572311039393")
            #expect(app.receiptType == .sandbox)
            #expect(app.bundleId == "com.example.app")
            let uuid = try #require(answer.body["notificationUUID"] as? String)
            #expect(try await sim.get("/sim/notifications/\(uuid)").body["notificationType"] as? String == "RESCIND_CONSENT")

            #expect(try await sim.post("/sim/notifications/rescind-consent", ["environment": "Staging"]).status == 400)
        }
    }

    @Test func subscriptionNotificationCarriesRenewalInfoAndStatus() async throws {
        try await SimHarness.with { sim in
            let purchase = try await sim.purchase(
                type: "Auto-Renewable Subscription", productId: "com.example.vip.month", environment: "Sandbox")
            let verifier = try Self.verifier(roots: [try await sim.rootDER()], environment: .sandbox)
            let subscribed = try #require(await verifier.verifyNotification(purchase.signedPayload).value)
            #expect(subscribed.payload.notificationType == .subscribed)
            #expect(subscribed.payload.subtype == .initialBuy)
            #expect(subscribed.payload.data?.status == .active)
            #expect(subscribed.renewalInfo?.payload.autoRenewStatus == .on)

            let expired = try await sim.event("EXPIRED", purchase.transactionId, subtype: "VOLUNTARY")
            let payload = try #require(expired["signedPayload"] as? String)
            let verified = try #require(await verifier.verifyNotification(payload).value)
            #expect(verified.payload.notificationType == .expired)
            #expect(verified.payload.subtype == .voluntary)
            #expect(verified.payload.data?.status == .expired)
            #expect(verified.renewalInfo?.payload.expirationIntent == .customerCancelled)
            #expect(verified.renewalInfo?.payload.autoRenewStatus == .off)
            #expect((verified.transaction?.payload.expiresDate ?? .max) <= Int64(Date().timeIntervalSince1970 * 1000) + 1000)
        }
    }
}
