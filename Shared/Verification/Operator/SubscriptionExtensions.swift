package import AppStore
package import Core
import Foundation

/// What `tollctl apple extend`, `extend-all`, `extend-status` and `app-transaction` run against Apple's App Store
/// Server API: renewal-date extensions (one subscription, or every active subscriber of a product) and a
/// customer's app transaction, verified like every JWS Apple signs.
///
/// An extension moves only Apple's renewal date: Apple then sends `RENEWAL_EXTENDED` for each subscription, and
/// the ledger extends the entitlement from that signed notification, never from this call's answer.
package enum SubscriptionExtensions {
    /// Extends one subscription (production first, then sandbox when the transaction is not found there), asking the
    /// apps of `project` only (docs/PROJECTS.md): another project's subscription is not found (`api_not_found`).
    package static func extend(
        configuration: VerifierConfiguration, originalTransactionId: String, request: ExtendRenewalDateRequest,
        project: ProjectID = .default
    ) async throws -> (AppStoreEnvironment, ExtendRenewalDateResponse) {
        let (_, _, apiClients) = try VerifierServices.appleClients(configuration, metrics: VerifierMetrics())
        let clients = OperatorClients.ordered(apiClients, of: project, configuration: configuration)
        guard !clients.isEmpty else { throw OperatorClients.apiNotConfigured(in: project) }
        let (environment, _, answer) = try await OperatorClients.firstFound(clients) { client in
            try await client.extendSubscriptionRenewalDate(originalTransactionId: originalTransactionId, request)
        }
        return (environment, answer)
    }

    /// Asks Apple to extend every active subscription of a product; returns the environment asked.
    package static func extendAll(
        configuration: VerifierConfiguration, request: MassExtendRenewalDateRequest, environment: AppStoreEnvironment
    ) async throws -> MassExtendRenewalDateResponse {
        try await client(configuration, environment).extendRenewalDateForAllActiveSubscribers(request)
    }

    /// The status of a mass extension.
    package static func status(
        configuration: VerifierConfiguration, productId: String, requestIdentifier: String, environment: AppStoreEnvironment
    ) async throws -> MassExtendRenewalDateStatusResponse {
        try await client(configuration, environment).getStatusOfSubscriptionRenewalDateExtensions(
            productId: productId, requestIdentifier: requestIdentifier)
    }

    /// The customer's app transaction, its signature checked with the verifier's rules (trusted roots, bundle,
    /// environment, app Apple ID); a JWS that does not verify is an error, never shown.
    package static func appTransaction(
        configuration: VerifierConfiguration, transactionId: String
    ) async throws -> (AppStoreEnvironment, AppTransaction) {
        // One set of clients (each owns a transport and its thread) for the call and the verification.
        let (signedData, _, apiClients) = try VerifierServices.appleClients(configuration, metrics: VerifierMetrics())
        let (environment, response) = try await firstFound(apiClients) { client in
            try await client.getAppTransactionInfo(transactionId: transactionId)
        }
        switch await signedData.verifyAppTransaction(response.signedAppTransactionInfo) {
        case .verified(let app): return (environment, app)
        case .rejected(let failure), .retryable(let failure):
            throw VerificationError("app_transaction_not_verified", "\(failure.code.rawValue): \(failure.message)")
        }
    }

    /// The default app's client (a mass extension names a product, and so one app: with several apps, the default
    /// app's products).
    private static func client(_ configuration: VerifierConfiguration, _ environment: AppStoreEnvironment) throws -> AppStoreServerAPIClient
    {
        let (_, _, clients) = try VerifierServices.appleClients(configuration, metrics: VerifierMetrics())
        guard !clients.isEmpty else { throw VerificationError.apiNotConfigured }
        guard let client = clients.client(configuration.bundleId, environment) else {
            throw VerificationError("environment_not_accepted", "this deployment does not use Apple's \(environment.rawValue) environment")
        }
        return client
    }

    private static func firstFound<T>(
        _ apiClients: AppleAPIClients, _ call: (AppStoreServerAPIClient) async throws -> T
    ) async throws -> (AppStoreEnvironment, T) {
        let (environment, _, answer) = try await OperatorClients.firstFound(OperatorClients.ordered(apiClients), call)
        return (environment, answer)
    }
}
