import AppStore
import ArgumentParser
import Foundation
import Verification

/// `tollctl apple extend-status PRODUCT_ID REQUEST_ID`: Get Status of Subscription Renewal Date Extensions.
struct ExtendStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend-status", abstract: "Show how far a product-wide extension has got.")

    @Argument var productId: String
    @Argument var requestId: String

    @Option(help: "production or sandbox.")
    var environment: String = "production"

    func run() async throws {
        let environment = try parsedEnvironment(environment)
        let status = try await withOperatorAPI("extend-status") { api in
            try await SubscriptionExtensions.status(
                api: api, productId: productId, requestIdentifier: requestId, environment: environment)
        }
        print("complete \(status.complete == true) at \(answerDate(status.completeDate))")
        print("succeeded \(status.succeededCount ?? 0) failed \(status.failedCount ?? 0)")
    }
}
