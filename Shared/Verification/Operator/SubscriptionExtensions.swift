package import AppStore
package import Core
import Foundation
import Pipeline

/// What `tollctl apple extend`, `extend-all`, `extend-status` and `app-transaction` run against Apple's App Store
/// Server API: renewal-date extensions (one subscription, or every active subscriber of a product) and a
/// customer's app transaction, verified like every JWS Apple signs. Every call takes its app's fleet-wide token first
/// (``OperatorAPI``).
///
/// An extension moves only Apple's renewal date: Apple then sends `RENEWAL_EXTENDED` for each subscription, and
/// the ledger extends the entitlement from that signed notification, never from this call's answer.
package enum SubscriptionExtensions {
    /// Extends one subscription (production first, then sandbox when the transaction is not found there), asking the
    /// apps of `project` only (docs/PROJECTS.md): another project's subscription is not found (`api_not_found`).
    package static func extend(
        api: OperatorAPI, originalTransactionId: String, request: ExtendRenewalDateRequest, project: ProjectID = .default
    ) async throws -> (AppStoreEnvironment, ExtendRenewalDateResponse) {
        let clients = api.ordered(of: project)
        guard !clients.isEmpty else { throw OperatorClients.apiNotConfigured(in: project) }
        let (entry, answer) = try await api.firstFound(.other, clients) { client in
            try await client.extendSubscriptionRenewalDate(originalTransactionId: originalTransactionId, request)
        }
        return (entry.environment, answer)
    }

    /// Asks Apple to extend every active subscription of a product; returns the environment asked.
    package static func extendAll(
        api: OperatorAPI, request: MassExtendRenewalDateRequest, environment: AppStoreEnvironment
    ) async throws -> MassExtendRenewalDateResponse {
        try await api.call(.other, try api.defaultApp(environment)) { try await $0.extendRenewalDateForAllActiveSubscribers(request) }
    }

    /// The status of a mass extension.
    package static func status(
        api: OperatorAPI, productId: String, requestIdentifier: String, environment: AppStoreEnvironment
    ) async throws -> MassExtendRenewalDateStatusResponse {
        try await api.call(.other, try api.defaultApp(environment)) {
            try await $0.getStatusOfSubscriptionRenewalDateExtensions(productId: productId, requestIdentifier: requestIdentifier)
        }
    }

    /// The customer's app transaction, its signature checked with the verifier's rules (trusted roots, bundle,
    /// environment, app Apple ID); a JWS that does not verify is an error, never shown.
    package static func appTransaction(api: OperatorAPI, transactionId: String) async throws -> (AppStoreEnvironment, AppTransaction) {
        let (entry, response) = try await api.firstFound(.other, api.ordered) { client in
            try await client.getAppTransactionInfo(transactionId: transactionId)
        }
        switch await api.signedData.verifyAppTransaction(response.signedAppTransactionInfo) {
        case .verified(let app): return (entry.environment, app)
        case .rejected(let failure), .retryable(let failure):
            throw VerificationError("app_transaction_not_verified", "\(failure.code.rawValue): \(failure.message)")
        }
    }
}
