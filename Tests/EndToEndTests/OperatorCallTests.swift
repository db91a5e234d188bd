import AppStore
import Foundation
import HTTPClient
import TestSupport
import Testing

extension TollgateSystemTests {
    /// Issue 31 item 6: an operator's calls of Apple's API over HTTP, for a service key with `admin` (or `read` for a
    /// look-up). Ingest checks them and queues a job; the verifier, which alone holds the API key, makes the call with
    /// the CLI's own code against the simulator, and the job's result is Apple's answer.
    @Suite struct OperatorCallTests {
        @Test(.logsOnFailure) func setAccountTokenExtendAndLookUpOrderOverHTTP() async throws {
            try await SystemHarness.with(.init(replicas: 1, serverAPI: true)) { system in
                let ingest = system.ingestClient
                let user = UserToken.newUser("admin")

                // A purchase made outside the app: its notification parks; the admin call ties it to the user.
                let purchase = try await system.simClient.purchase("com.example.noads", type: "Non-Consumable")
                let note = try await ingest.postNotification(purchase.notificationBody)
                let noteJob = try #require(note.json["jobId"] as? String, "\(note.text)")
                #expect(try await ingest.waitForJob(noteJob, auth: .service).result["outcome"] as? String == "parked")
                let tied = try await ingest.post(
                    "/v1/admin/apple/set-account-token?wait=20", auth: .service,
                    json: ["originalTransactionId": purchase.originalTransactionId, "userId": user])
                #expect(tied.status == 200, "\(tied.text)")
                let tiedResult = tied.json["result"] as? [String: Any] ?? [:]
                #expect(tied.json["status"] as? String == "fulfilled", "\(tied.text)")
                #expect(tiedResult["changed"] as? Bool == true && tiedResult["userId"] as? String == user, "\(tied.text)")
                #expect(tiedResult["by"] as? String != nil)
                _ = try await system.awaitEntitlement(user, "no_ads", "active")

                // The CLI's checks hold: the same purchase cannot be handed to another user.
                let stolen = try await ingest.post(
                    "/v1/admin/apple/set-account-token?wait=20", auth: .service,
                    json: ["originalTransactionId": purchase.originalTransactionId, "userId": UserToken.newUser("thief")])
                #expect(stolen.json["status"] as? String == "rejected", "\(stolen.text)")
                #expect(stolen.json["reason"] as? String == "owned_by_another_user", "\(stolen.text)")

                // Extend a subscription's renewal date at Apple (the ledger follows Apple's RENEWAL_EXTENDED later).
                let subscription = try await system.simClient.purchase("com.example.vip.month", type: "Auto-Renewable Subscription")
                let requestId = UUID().uuidString.lowercased()
                let extended = try await ingest.post(
                    "/v1/admin/apple/extend?wait=20", auth: .service,
                    json: ["originalTransactionId": subscription.originalTransactionId, "days": 7, "reason": 1, "requestId": requestId])
                #expect(extended.json["status"] as? String == "fulfilled", "\(extended.text)")
                #expect((extended.json["result"] as? [String: Any])?["effectiveDate"] as? String != nil, "\(extended.text)")

                // Look Up Order ID: the order's transaction, verified, with its owner.
                let orderId = try #require(purchase.orderId)
                let looked = try await ingest.send(.get, "/v1/lookup?orderId=\(orderId)&wait=20", auth: .service)
                #expect(looked.status == 200, "\(looked.text)")
                let transactions = (looked.json["result"] as? [String: Any])?["transactions"] as? [[String: Any]] ?? []
                #expect(transactions.count == 1, "\(looked.text)")
                #expect(transactions.first?["verified"] as? Bool == true && transactions.first?["userId"] as? String == user)

                // Bad arguments are refused at the door, as the CLI refuses them; a user's token never gets through.
                let bad = try await ingest.post(
                    "/v1/admin/apple/extend", auth: .service, json: ["originalTransactionId": "12a", "days": 91])
                #expect(bad.status == 400, "\(bad.text)")
                let asUser = try await ingest.post(
                    "/v1/admin/apple/extend", auth: .user(user), json: ["originalTransactionId": "1", "days": 1])
                #expect(asUser.status == 403)
            }
        }
    }
}
