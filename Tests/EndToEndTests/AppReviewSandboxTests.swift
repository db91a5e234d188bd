import AppStore
import Foundation
import HTTPClient
import Ledger
import Testing

extension TollgateSystemTests {
    /// App Review buys with sandbox accounts against the production build: a production deployment takes
    /// that only with `TOLLGATE_ACCEPT_SANDBOX=true`, and keeps Apple's environment on the transaction.
    @Suite struct AppReviewSandboxTests {
        @Test(.logsOnFailure) func aSandboxReceiptIsRejectedWithItsCodeWhenProductionDoesNotAcceptSandbox() async throws {
            let system = try SystemHarness.require()
            #expect(!system.options.acceptSandbox)
            let ingest = system.ingestClient
            let user = UserToken.newUser("reviewer-refused")
            let purchase = try await system.simClient.purchase("com.example.coins100", type: "Consumable", environment: "Sandbox")

            let receipt = try await ingest.submitReceipt(user: user, receipt: try #require(purchase.receipt))
            #expect(receipt.status == "rejected", "\(receipt)")
            #expect(receipt.reason == "sandbox_not_allowed", "\(receipt)")
            let signed = try await ingest.submitTransaction(user: user, signedTransaction: purchase.signedTransaction)
            #expect(signed.status == "rejected", "\(signed)")
            #expect(signed.reason == "sandbox_not_allowed", "\(signed)")
            #expect(try await ingest.entitlements(user: user).coins == 0)
            #expect(try await system.tollctlUser(user).contains("transactions 0"))
        }

        /// Issue 33: with `TOLLGATE_ACCEPT_SANDBOX=true` a production deployment keeps a reviewer's sandbox purchase apart
        /// (the user's sandbox side): the buyer's own app sees it in its `sandbox` block, the customer API's production
        /// figures and the production event sequence never include it, and an operator clears it. Issue 42: it is no
        /// production value until the user is marked a tester — a spend draws production coins only, the read's top
        /// level is production's — and once marked, the read merges it and a spend draws it first.
        @Test(.logsOnFailure) func aSandboxPurchaseIsKeptApartWhenProductionAcceptsSandbox() async throws {
            // A deployment of its own: the setting is per verifier process.
            try await SystemHarness.with(.init(acceptSandbox: true, replicas: 1)) { review in
                let ingest = review.ingestClient
                let user = UserToken.newUser("reviewer")
                let sandbox = try await review.simClient.purchase("com.example.coins100", type: "Consumable", environment: "Sandbox")
                let credited = try await ingest.submitReceipt(user: user, receipt: try #require(sandbox.receipt))
                #expect(credited.status == "fulfilled", "\(credited)")
                #expect(credited.transactionResults == ["applied"], "\(credited)")
                // The buyer's own app sees it in a block of its own; the top level is production's (none yet).
                let own = try await review.awaitLedger(user, "sandbox coins == 100") { $0.sandbox?.coins == 100 }
                #expect(own.coins == 0 && own.coinsSandbox == 0 && own.sandboxMerged == false, "\(own)")

                // Production purchases still work, and each side keeps its own.
                let production = try await review.simClient.purchase("com.example.coins100", type: "Consumable")
                let paid = try await ingest.submitTransaction(user: user, signedTransaction: production.signedTransaction)
                #expect(paid.status == "fulfilled", "\(paid)")
                try await review.awaitCoins(user, 100)

                // Not a tester: a spend draws production coins only (issue 42's attack: free TestFlight coins spent as
                // paid ones).
                let refused = try await ingest.post(
                    "/v1/users/\(user)/coins/spend", auth: .service, json: ["amount": 150, "reason": "castle", "idempotencyKey": "rv-0"])
                #expect(refused.status == 409 && refused.errorCode == "insufficient_coins", "\(refused.text)")

                // Marked a tester (App Review's demo account), the read merges the sandbox side.
                let marked = try await ingest.send(
                    .put, "/v1/admin/testers/\(user)", auth: .service, body: Data(#"{"reason":"App Review"}"#.utf8))
                #expect(marked.status == 200 && marked.json["changed"] as? Bool == true, "\(marked.text)")
                let merged = try await review.awaitCoins(user, 200)
                #expect(merged.coinsSandbox == 100 && merged.sandboxMerged == true, "\(merged)")

                // The customer API: production figures without the sandbox purchase; the sandbox side apart.
                let info = try await ingest.send(.get, "/v1/users/\(user)", auth: .service)
                #expect(info.json["coins"] as? Int == 100, "\(info.text)")
                let ids = (info.json["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
                #expect(ids == [production.transactionId], "\(info.text)")
                let side = info.json["sandbox"] as? [String: Any] ?? [:]
                #expect(side["coins"] as? Int == 100 && side["environment"] as? String == "sandbox", "\(info.text)")
                let sandboxIds = (side["transactions"] as? [[String: Any]] ?? []).compactMap { $0["transactionId"] as? String }
                #expect(sandboxIds == [sandbox.transactionId], "\(info.text)")
                let lookup = try await ingest.send(.get, "/v1/transactions/\(sandbox.transactionId)", auth: .service)
                #expect(lookup.status == 200, "\(lookup.text)")
                #expect(((lookup.json["transaction"] as? [String: Any])?["environment"] as? String) == "sandbox", "\(lookup.text)")

                // Each side counts its own sequence: production seq 1 is the paid purchase.
                let events = try await ingest.events(user: user)
                #expect(events.map(\.seq) == [1, 2] && events.first?.transactionId == production.transactionId, "\(events)")
                #expect(events.map(\.type) == ["purchase", "tester.added"], "\(events)")
                let sandboxEvents = try await ingest.send(.get, "/v1/users/\(user)/events?side=sandbox", auth: .service)
                let sandboxList = sandboxEvents.json["events"] as? [[String: Any]] ?? []
                #expect(sandboxList.compactMap { $0["seq"] as? Int } == [1], "\(sandboxEvents.text)")
                #expect(sandboxList.first?["side"] as? String == "sandbox", "\(sandboxEvents.text)")
                let badSide = try await ingest.send(.get, "/v1/users/\(user)/events?side=production", auth: .service)
                #expect(badSide.status == 400 && badSide.errorCode == "invalid_request", "\(badSide.text)")

                // A tester's spend draws the sandbox side first.
                let spent = try await ingest.post(
                    "/v1/users/\(user)/coins/spend", auth: .service, json: ["amount": 150, "reason": "castle", "idempotencyKey": "rv-1"])
                #expect(spent.status == 200 && spent.json["balance"] as? Int == 50, "\(spent.text)")
                #expect(spent.json["sandboxAmount"] as? Int == 100, "\(spent.text)")
                let after = try await ingest.send(.get, "/v1/users/\(user)", auth: .service)
                #expect(after.json["coins"] as? Int == 50 && after.json["coinsSpent"] as? Int == 50, "\(after.text)")

                let report = try await review.tollctlUser(user)
                #expect(report.contains("sandbox side"), "\(report)")
                let sandboxLine = report.split(separator: "\n").first { $0.contains(sandbox.transactionId) } ?? ""
                #expect(sandboxLine.lowercased().contains("environment=sandbox"), "\(report)")
                try await review.expectAuditClean()

                // An operator clears the sandbox side; production stays.
                let cleared = try await review.tollctl(["sandbox", "clear", user, "--by", "e2e"])
                #expect(cleared.status == 0 && cleared.output.contains("transactions=1"), "\(cleared.output)")
                let cleaned = try await review.awaitCoins(user, 50)
                #expect(cleaned.coinsSandbox == 0, "\(cleaned)")
                try await review.expectAuditClean()
            }
        }
    }
}
