import Foundation
import Ledger
import Testing

extension TollgateSystemTests {
    /// Coins bought with a receipt (the legacy flow) and with a StoreKit 2 signed transaction.
    @Suite struct ConsumableTests {
        @Test(.logsOnFailure) func aReceiptPaysItsOrderAndTheSameSubmissionAgainCreditsNothingMore() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let user = UserToken.newUser("receipt")
            let order = try await ingest.createOrder(user: user, productId: "com.example.coins100")
            let purchase = try await system.simClient.purchase(
                "com.example.coins100", type: "Consumable", appAccountToken: order.appAccountToken)
            let receipt = try #require(purchase.receipt)

            let first = try await ingest.submitReceipt(user: user, receipt: receipt, orderNo: order.orderNo)
            #expect(first.status == "fulfilled", "\(first)")
            try await system.awaitCoins(user, 100)

            // Apple's ONE_TIME_CHARGE for the same transaction (posted by the simulator; the same body gets the
            // same job) is applied too, and changes nothing.
            let note = try await ingest.postNotification(purchase.notificationBody)
            let noteJob = try #require(note.json["jobId"] as? String, "\(note.text)")
            let noteOutcome = try await ingest.waitForJob(noteJob, auth: .service)
            #expect(noteOutcome.status == "fulfilled", "\(noteOutcome)")

            let again = try await ingest.submitReceipt(user: user, receipt: receipt, orderNo: order.orderNo)
            #expect(again.jobId == first.jobId)
            #expect(again.status == "fulfilled")
            let asJWS = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(asJWS.status == "fulfilled", "\(asJWS)")
            #expect(asJWS.transactionResults == ["duplicate"], "\(asJWS)")
            try await system.awaitCoins(user, 100)
            #expect(try await ingest.entitlements(user: user).coins == 100)
            try await system.expectAuditClean()
        }

        @Test(.logsOnFailure) func aStoreKit2TransactionIsCreditedCoinsTimesQuantityOnce() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let user = UserToken.newUser("jws")
            let purchase = try await system.simClient.purchase(
                "com.example.coins100", type: "Consumable",
                extra: ["quantity": 3])
            let first = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(first.status == "fulfilled", "\(first)")
            #expect(first.transactionResults == ["applied"], "\(first)")
            try await system.awaitCoins(user, 300)

            let again = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(again.jobId == first.jobId)
            let viaReceipt = try await ingest.submitReceipt(user: user, receipt: try #require(purchase.receipt))
            #expect(viaReceipt.status == "fulfilled", "\(viaReceipt)")
            #expect(viaReceipt.transactionResults == ["duplicate"], "\(viaReceipt)")
            // Apple's notification (parked until the submission bound the owner) is applied as a duplicate, after the
            // submission, whichever partition its purchase chain lives in.
            let note = try await ingest.postNotification(purchase.notificationBody)
            let noteJob = try #require(note.json["jobId"] as? String, "\(note.text)")
            let applied = try await ingest.waitForJob(noteJob, auth: .service) { $0.result["outcome"] as? String != "parked" }
            #expect(applied.transactionResults == ["duplicate"], "\(applied)")
            try await system.awaitCoins(user, 300)
            try await system.expectAuditClean()
        }
    }
}
