import AppStore
import ArgumentParser
import Foundation
import Verification

/// `tollctl apple app-transaction TRANSACTION_ID`: Get App Transaction Info, verified.
struct AppTransactionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-transaction", abstract: "Show a customer's app transaction, verified.",
        discussion: "Any of the customer's transaction IDs. Exit 1 when Apple's answer does not verify.")

    @Argument var transactionId: String

    func run() async throws {
        let (environment, app) = try await withOperatorAPI("app-transaction") { api in
            try await SubscriptionExtensions.appTransaction(api: api, transactionId: transactionId)
        }
        print("environment \(environment.rawValue) verified")
        print("appTransactionId \(app.appTransactionId ?? "-") bundle \(app.bundleId ?? "-")")
        print("originalPurchase \(answerDate(app.originalPurchaseDate)) version \(app.applicationVersion ?? "-")")
    }
}
