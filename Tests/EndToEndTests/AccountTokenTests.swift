import Foundation
import TestSupport
import Testing

extension TollgateSystemTests {
    /// A purchase made outside the app (no appAccountToken, so its notification parks): an operator's
    /// `tollctl apple set-account-token` ties it to the user at Apple, and the ledger binds and credits it once.
    @Suite struct AccountTokenTests {
        @Test(.logsOnFailure) func aPurchaseMadeOutsideTheAppIsTiedToItsUserAndCreditedOnce() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let user = UserToken.newUser("outside")
            let purchase = try await system.simClient.purchase("com.example.noads", type: "Non-Consumable")
            let note = try await ingest.postNotification(purchase.notificationBody)
            let noteJob = try #require(note.json["jobId"] as? String, "\(note.text)")
            let parked = try await ingest.waitForJob(noteJob, auth: .service)
            #expect(parked.result["outcome"] as? String == "parked", "\(parked)")

            // tollctl with the verifier's settings for this deployment's simulator.
            var environment = try testAPIKeySettings(directory: system.directory)
            environment.merge(system.redis.environment) { _, new in new }
            environment.merge([
                "LOG_LEVEL": "warning", "TOLLGATE_ENVIRONMENT": "production",
                "TOLLGATE_ROOT_CERTS": system.directory.appendingPathComponent("sim-ca/root.der").path,
                "TOLLGATE_RECEIPT_INTERMEDIATE_CERTS": system.directory.appendingPathComponent("sim-ca/intermediate.der").path,
                "TOLLGATE_APPSTORE_API_URL": system.sim.baseURL, "TOLLGATE_APPSTORE_API_SANDBOX_URL": system.sim.baseURL + "/sandbox",
                "TOLLGATE_BUNDLE_ID": SystemHarness.bundleId, "TOLLGATE_APP_APPLE_ID": "1234567890",
            ]) { _, new in new }
            let run = try await ChildProcess.run(
                "tollctl", arguments: ["apple", "set-account-token", purchase.transactionId, "--user", user],
                environment: environment)
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.contains("handed Apple's transaction to the ledger"), "\(run.output)")

            _ = try await system.awaitEntitlement(user, "no_ads", "active")
            // The parked notification is applied too, and credits nothing more.
            let replayed = try await ingest.waitForJob(noteJob, auth: .service) { $0.result["outcome"] as? String != "parked" }
            #expect(replayed.transactionResults == ["duplicate"], "\(replayed)")
            let report = try await system.tollctlUser(user)
            #expect(report.contains(purchase.transactionId), "\(report)")
            try await system.expectAuditClean()
        }
    }
}
