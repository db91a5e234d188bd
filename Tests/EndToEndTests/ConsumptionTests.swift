import Foundation
import Testing

extension TollgateSystemTests {
    /// A `CONSUMPTION_REQUEST` is answered with Send Consumption Information v2 only once the app's backend
    /// recorded the customer's consent through ingest; before that nothing is sent and the job says why.
    @Suite struct ConsumptionTests {
        @Test(.logsOnFailure) func consumptionInformationV2IsSentOnlyWithRecordedConsent() async throws {
            // A deployment of its own: its verifiers hold an App Store Server API key.
            try await SystemHarness.with(.init(replicas: 1, serverAPI: true)) { system in
                let ingest = system.ingestClient
                let sim = system.simClient
                let user = UserToken.newUser("consumption")
                let purchase = try await sim.purchase("com.example.coins100", type: "Consumable")
                let bought = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
                #expect(bought.status == "fulfilled", "\(bought)")
                try await system.awaitCoins(user, 100)

                /// Apple's request, and its job (the notification posted again is the same job) once final.
                func consumptionRequest() async throws -> IngestClient.JobOutcome {
                    let request = try await sim.event("CONSUMPTION_REQUEST", transactionId: purchase.transactionId)
                    let posted = try await ingest.postNotification(request.notificationBody)
                    #expect(posted.status == 200, "\(posted.text)")
                    return try await ingest.waitForJob(try #require(posted.json["jobId"] as? String), auth: .service)
                }

                let unanswered = try await consumptionRequest()
                #expect(unanswered.status == "fulfilled", "\(unanswered)")
                #expect(unanswered.result["sent"] as? Bool == false, "\(unanswered)")
                #expect(unanswered.result["reason"] as? String == "no_customer_consent", "\(unanswered)")
                #expect(try await sim.consumption(purchase.transactionId) == nil)

                let consent = try await ingest.recordConsent(user: user, consented: true)
                #expect(consent.status == 200, "\(consent.text)")
                let answered = try await consumptionRequest()
                #expect(answered.result["sent"] as? Bool == true, "\(answered)")
                #expect(answered.result["api"] as? String == "v2", "\(answered)")
                let sent = try #require(try await sim.consumption(purchase.transactionId))
                #expect(sent["sim.endpoint"] as? String == "v2")
                #expect(sent["customerConsented"] as? Bool == true)
                #expect(sent["deliveryStatus"] as? String == "DELIVERED")
                #expect(sent["consumptionPercentage"] as? Int == 0)  // all 100 coins are still in the balance
                #expect(sent["sampleContentProvided"] as? Bool == false)
                #expect(sent["refundPreference"] == nil)
            }
        }
    }
}
