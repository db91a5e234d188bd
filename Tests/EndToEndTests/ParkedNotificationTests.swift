import Foundation
import Ledger
import Testing

extension TollgateSystemTests {
    /// Apple's notification can arrive before the app has told Tollgate who bought: it is kept, not lost
    /// and not credited, and applied once the owner is known.
    @Suite struct ParkedNotificationTests {
        @Test(.logsOnFailure) func aNotificationBeforeTheSubmissionIsParkedThenBoundAndCreditedOnce() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let user = UserToken.newUser("parked")
            let purchase = try await system.simClient.purchase("com.example.coins100", type: "Consumable")

            // The simulator posts ONE_TIME_CHARGE at once; the same body gets the same job from ingest.
            let note = try await ingest.postNotification(purchase.notificationBody)
            #expect(note.status == 200, "\(note.text)")
            let noteJob = try #require(note.json["jobId"] as? String, "\(note.text)")
            let parked = try await ingest.waitForJob(noteJob, auth: .service)
            #expect(parked.status == "fulfilled", "\(parked)")
            #expect(parked.result["outcome"] as? String == "parked", "\(parked)")
            #expect(try await ingest.entitlements(user: user).coins == 0)

            let submitted = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(submitted.status == "fulfilled", "\(submitted)")
            #expect(submitted.transactionResults == ["applied"], "\(submitted)")
            #expect(submitted.result["unparked"] as? Int == 1, "\(submitted)")

            // The parked notification goes back through the fulfillers and changes nothing more. It applies after the
            // submission even when its purchase chain lives in another partition (the claim there moves it back first).
            let replayed = try await ingest.waitForJob(noteJob, auth: .service) { $0.result["outcome"] as? String != "parked" }
            #expect(replayed.status == "fulfilled", "\(replayed)")
            #expect(replayed.transactionResults == ["duplicate"], "\(replayed)")
            try await system.awaitCoins(user, 100)
            try await system.expectAuditClean()
        }
    }
}
