import AppStore
import ArgumentParser
import Foundation
import Verification

/// `tollctl apple extend-all PRODUCT_ID --days N`: Extend Subscription Renewal Dates for All Active Subscribers.
struct ExtendAllCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend-all", abstract: "Extend every active subscription of a product at Apple.",
        discussion: "Prints the request id; follow it with 'tollctl apple extend-status PRODUCT_ID REQUEST_ID'.")

    @Argument(help: "The auto-renewable product.")
    var productId: String

    @OptionGroup var options: ExtensionOptions

    @Option(help: "Only these storefronts (comma-separated ISO 3166-1 alpha-3 codes); all by default.")
    var storefronts: String?

    @Option(help: "production or sandbox.")
    var environment: String = "production"

    func run() async throws {
        let environment = try parsedEnvironment(environment)
        let codes = storefronts?.split(separator: ",").map { String($0).uppercased() }
        let request = MassExtendRenewalDateRequest(
            extendByDays: options.days, extendReasonCode: options.reason, requestIdentifier: options.identifier,
            productId: productId, storefrontCountryCodes: codes)
        let answer = try await withOperatorAPI("extend-all") { api in
            try await SubscriptionExtensions.extendAll(api: api, request: request, environment: environment)
        }
        print("request \(answer.requestIdentifier)")
    }
}
