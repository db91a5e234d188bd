import Foundation
import HTTPClient

extension AppStoreServerAPIClient {
    /// Extend a Subscription Renewal Date: `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`.
    package func extendSubscriptionRenewalDate(
        originalTransactionId: String, _ request: ExtendRenewalDateRequest
    ) async throws -> ExtendRenewalDateResponse {
        let id = try segment(originalTransactionId, "original transaction ID")
        return try await call(
            .put, "/inApps/v1/subscriptions/extend/\(id)", body: try encode(request), as: ExtendRenewalDateResponse.self)
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers: `POST /inApps/v1/subscriptions/extend/mass`.
    package func extendRenewalDateForAllActiveSubscribers(
        _ request: MassExtendRenewalDateRequest
    ) async throws -> MassExtendRenewalDateResponse {
        try await call(
            .post, "/inApps/v1/subscriptions/extend/mass", body: try encode(request), as: MassExtendRenewalDateResponse.self)
    }

    /// Get Status of Subscription Renewal Date Extensions:
    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    package func getStatusOfSubscriptionRenewalDateExtensions(
        productId: String, requestIdentifier: String
    ) async throws -> MassExtendRenewalDateStatusResponse {
        let product = try segment(productId, "product ID")
        let request = try segment(requestIdentifier, "request identifier")
        return try await call(
            .get, "/inApps/v1/subscriptions/extend/mass/\(product)/\(request)", as: MassExtendRenewalDateStatusResponse.self)
    }

    /// Get App Transaction Info: `GET /inApps/v1/transactions/appTransactions/{transactionId}` (any of the
    /// customer's transaction IDs, or their app transaction ID).
    package func getAppTransactionInfo(transactionId: String) async throws -> AppTransactionInfoResponse {
        let id = try segment(transactionId, "transaction ID")
        return try await call(.get, "/inApps/v1/transactions/appTransactions/\(id)", as: AppTransactionInfoResponse.self)
    }
}
