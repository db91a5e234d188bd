import AppStore
import ArgumentParser
import Foundation
import Verification

/// Options every Apple extension command shares.
struct ExtensionOptions: ParsableArguments {
    @Option(help: "Days to add to the renewal date (1-90).")
    var days: Int

    @Option(help: "Why: 0 undeclared, 1 customer satisfaction, 2 other, 3 service issue or outage.")
    var reason: Int = 0

    @Option(name: .customLong("request-id"), help: "The request's UUID (default: a new one); the same UUID again is the same request.")
    var requestID: String?

    func validate() throws {
        guard (1...90).contains(days) else { throw ValidationError("--days must be 1-90") }
        guard (0...3).contains(reason) else { throw ValidationError("--reason must be 0-3") }
        if let requestID, UUID(uuidString: requestID) == nil { throw ValidationError("--request-id must be a UUID") }
    }

    var identifier: String { (requestID ?? UUID().uuidString).lowercased() }
}

func verifierConfiguration() throws -> VerifierConfiguration {
    let configuration = try VerifierConfiguration(environment: ProcessInfo.processInfo.environment)
    configuration.shared.bootstrapLogging(ceiling: .warning)
    return configuration
}

func parsedEnvironment(_ text: String) throws -> AppStoreEnvironment {
    let environment = AppStoreEnvironment(rawValue: text.capitalized)
    guard environment == .production || environment == .sandbox else {
        throw ValidationError("--environment must be production or sandbox")
    }
    return environment
}

private func date(_ milliseconds: Int64?) -> String {
    guard let milliseconds else { return "-" }
    return ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
}

/// `tollctl apple extend ORIGINAL_TRANSACTION_ID --days N`: Extend a Subscription Renewal Date.
struct ExtendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "extend", abstract: "Extend one subscription's renewal date at Apple.",
        discussion: """
            Apple then sends RENEWAL_EXTENDED, from which the ledger extends the entitlement. Prints the environment, \
            the request id and the new renewal date; exit 1 when Apple refuses (ineligible, two extensions a year).
            """)

    @Argument(help: "The subscription's original transaction ID.")
    var originalTransactionId: String

    @OptionGroup var options: ExtensionOptions

    func run() async throws {
        let request = ExtendRenewalDateRequest(
            extendByDays: options.days, extendReasonCode: options.reason, requestIdentifier: options.identifier)
        let (environment, answer) = try await SubscriptionExtensions.extend(
            configuration: try verifierConfiguration(), originalTransactionId: originalTransactionId, request: request)
        print("environment \(environment.rawValue)")
        print("request \(request.requestIdentifier)")
        print("success \(answer.success == true) renews \(date(answer.effectiveDate))")
        if answer.success != true { throw ExitCode(1) }
    }
}

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
        let answer = try await SubscriptionExtensions.extendAll(
            configuration: try verifierConfiguration(), request: request, environment: environment)
        print("request \(answer.requestIdentifier)")
    }
}

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
        let status = try await SubscriptionExtensions.status(
            configuration: try verifierConfiguration(), productId: productId, requestIdentifier: requestId,
            environment: environment)
        print("complete \(status.complete == true) at \(date(status.completeDate))")
        print("succeeded \(status.succeededCount ?? 0) failed \(status.failedCount ?? 0)")
    }
}

/// `tollctl apple app-transaction TRANSACTION_ID`: Get App Transaction Info, verified.
struct AppTransactionCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app-transaction", abstract: "Show a customer's app transaction, verified.",
        discussion: "Any of the customer's transaction IDs. Exit 1 when Apple's answer does not verify.")

    @Argument var transactionId: String

    func run() async throws {
        let (environment, app) = try await SubscriptionExtensions.appTransaction(
            configuration: try verifierConfiguration(), transactionId: transactionId)
        print("environment \(environment.rawValue) verified")
        print("appTransactionId \(app.appTransactionId ?? "-") bundle \(app.bundleId ?? "-")")
        print("originalPurchase \(date(app.originalPurchaseDate)) version \(app.applicationVersion ?? "-")")
    }
}
