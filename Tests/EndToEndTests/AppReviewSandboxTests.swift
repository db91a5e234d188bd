import Foundation
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

        @Test(.logsOnFailure) func aSandboxReceiptIsCreditedAndKeptAsSandboxWhenProductionAcceptsSandbox() async throws {
            // A deployment of its own: the setting is per verifier process.
            try await SystemHarness.with(.init(acceptSandbox: true, replicas: 1)) { review in
                let ingest = review.ingestClient
                let user = UserToken.newUser("reviewer")
                let sandbox = try await review.simClient.purchase("com.example.coins100", type: "Consumable", environment: "Sandbox")
                let credited = try await ingest.submitReceipt(user: user, receipt: try #require(sandbox.receipt))
                #expect(credited.status == "fulfilled", "\(credited)")
                #expect(credited.transactionResults == ["applied"], "\(credited)")
                try await review.awaitCoins(user, 100)

                // Production purchases still work, and each transaction keeps its own environment.
                let production = try await review.simClient.purchase("com.example.coins100", type: "Consumable")
                let paid = try await ingest.submitTransaction(user: user, signedTransaction: production.signedTransaction)
                #expect(paid.status == "fulfilled", "\(paid)")
                try await review.awaitCoins(user, 200)
                let report = try await review.tollctlUser(user)
                let lines = report.split(separator: "\n")
                let sandboxLine = lines.first { $0.contains(sandbox.transactionId) } ?? ""
                let productionLine = lines.first { $0.contains(production.transactionId) } ?? ""
                #expect(sandboxLine.lowercased().contains("environment=sandbox"), "\(report)")
                #expect(productionLine.lowercased().contains("environment=production"), "\(report)")
                try await review.expectAuditClean()
            }
        }
    }
}
