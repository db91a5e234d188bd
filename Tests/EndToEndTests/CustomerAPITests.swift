import AppStore
import Foundation
import HTTPClient
import TestSupport
import Testing

extension TollgateSystemTests {
    /// Issue 31 end to end: the app's backend reads a customer, spends coins and grants an entitlement through the
    /// real ingest, against purchases the real verifier and fulfiller applied; every change is an event in order, and
    /// the audit tells Apple's records from the app's own word.
    @Suite struct CustomerAPITests {
        @Test(.logsOnFailure) func aBackendReadsSpendsAndGrantsWithoutTouchingApplesRecords() async throws {
            let system = try SystemHarness.require()
            let ingest = system.ingestClient
            let user = UserToken.newUser("customer")
            let purchase = try await system.simClient.purchase("com.example.coins100", type: "Consumable")
            let bought = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(bought.status == "fulfilled", "\(bought)")

            let info = try await ingest.send(.get, "/v1/users/\(user)", auth: .service)
            #expect(info.status == 200, "\(info.text)")
            #expect(info.json["coins"] as? Int == 100, "\(info.text)")
            let transactions = info.json["transactions"] as? [[String: Any]] ?? []
            #expect(transactions.compactMap { $0["transactionId"] as? String } == [purchase.transactionId])

            let owner = try await ingest.send(.get, "/v1/transactions/\(purchase.transactionId)", auth: .service)
            #expect(owner.json["userId"] as? String == user, "\(owner.text)")

            // Spend: the same key answers the same; more than the balance is refused with the balance.
            let spendBody = try JSONSerialization.data(withJSONObject: ["amount": 30, "reason": "sword", "idempotencyKey": "e2e-1"])
            let spent = try await ingest.send(.post, "/v1/users/\(user)/coins/spend", auth: .service, body: spendBody)
            #expect(spent.status == 200 && spent.json["balance"] as? Int == 70, "\(spent.text)")
            let again = try await ingest.send(.post, "/v1/users/\(user)/coins/spend", auth: .service, body: spendBody)
            #expect(again.body == spent.body)
            let tooMuch = try await ingest.post(
                "/v1/users/\(user)/coins/spend", auth: .service, json: ["amount": 71, "reason": "castle", "idempotencyKey": "e2e-2"])
            #expect(tooMuch.status == 409 && tooMuch.errorCode == "insufficient_coins", "\(tooMuch.text)")

            // A grant: labelled in the user's own entitlements, and never an Apple record.
            let until = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
            let granted = try await ingest.post(
                "/v1/users/\(user)/grants", auth: .service, json: ["entitlement": "vip", "until": until, "reason": "apology"])
            #expect(granted.status == 201, "\(granted.text)")
            let entitlements = try await ingest.send(.get, "/v1/users/\(user)/entitlements", auth: .user(user))
            let vip = (entitlements.json["entitlements"] as? [[String: Any]] ?? []).first { $0["entitlement"] as? String == "vip" }
            #expect(vip?["source"] as? String == "grant" && vip?["state"] as? String == "active", "\(entitlements.text)")

            // Every change is an event, seq 1, 2, 3… with no gap.
            let events = try await ingest.events(user: user)
            #expect(events.map(\.seq) == Array(1...events.count))
            #expect(events.contains { $0.type == "coins.spent" } && events.contains { $0.type == "grant.created" }, "\(events.map(\.type))")
            let after = try await ingest.send(.get, "/v1/users/\(user)", auth: .service)
            #expect(after.json["coins"] as? Int == 70 && after.json["coinsSpent"] as? Int == 30, "\(after.text)")
            #expect(after.json["lastEventSeq"] as? Int == events.count)
            try await system.expectAuditClean()
        }
    }
}
