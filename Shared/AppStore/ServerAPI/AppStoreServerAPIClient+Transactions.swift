import Foundation
import HTTPClient

extension AppStoreServerAPIClient {
    /// Get Transaction Info: `GET /inApps/v1/transactions/{transactionId}`.
    package func getTransactionInfo(transactionId: String) async throws -> TransactionInfoResponse {
        let id = try segment(transactionId, "transaction ID")
        return try await call(.get, "/inApps/v1/transactions/\(id)", as: TransactionInfoResponse.self)
    }

    /// Set App Account Token: `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`; Apple answers
    /// `200` with no body, and from then on signs the purchase's transactions and renewal info with this token.
    /// Apple refuses a token that is not a UUID (`api_invalid_app_account_token`), a Family Sharing purchase
    /// (`api_family_transaction_not_supported`) and a transaction ID that is not an original one
    /// (`api_not_original_transaction_id`); an unknown ID is `api_not_found`.
    package func setAppAccountToken(originalTransactionId: String, _ request: UpdateAppAccountTokenRequest) async throws {
        let id = try segment(originalTransactionId, "original transaction ID")
        try await send(.put, "/inApps/v1/transactions/\(id)/appAccountToken", body: try encode(request))
    }

    /// Get Transaction History (v2), every page: the signed transactions of the customer who owns
    /// `transactionId`, in the order Apple returns them. `beforePage` runs before each page is asked for (a caller
    /// takes a rate-limit token per call there); past `pageLimit` pages ``PageLimitExceeded`` is thrown.
    package func getTransactionHistory(
        transactionId: String, query: TransactionHistoryQuery = TransactionHistoryQuery(), pageLimit: Int? = nil,
        beforePage: @Sendable () async throws -> Void = {}
    ) async throws -> [String] {
        try await collectRevisions("transaction history", pageLimit: pageLimit) { revision in
            try await beforePage()
            let page = try await self.getTransactionHistoryPage(transactionId: transactionId, query: query, revision: revision)
            return (page.signedTransactions ?? [], page.hasMore ?? false, page.revision)
        }
    }

    /// One page of Get Transaction History (v2): `GET /inApps/v2/history/{transactionId}?revision=…`.
    package func getTransactionHistoryPage(
        transactionId: String, query: TransactionHistoryQuery = TransactionHistoryQuery(), revision: String? = nil
    ) async throws -> HistoryResponse {
        let id = try segment(transactionId, "transaction ID")
        var items = query.queryItems
        if let revision { items.insert(URLQueryItem(name: "revision", value: revision), at: 0) }
        return try await call(.get, "/inApps/v2/history/\(id)", query: items, as: HistoryResponse.self)
    }

    /// Get All Subscription Statuses: `GET /inApps/v1/subscriptions/{transactionId}`, optionally only
    /// subscriptions in the given statuses.
    package func getAllSubscriptionStatuses(
        transactionId: String, statuses: [SubscriptionStatus] = []
    ) async throws -> StatusResponse {
        let id = try segment(transactionId, "transaction ID")
        let items = statuses.map { URLQueryItem(name: "status", value: String($0.rawValue)) }
        return try await call(.get, "/inApps/v1/subscriptions/\(id)", query: items, as: StatusResponse.self)
    }

    /// Look Up Order ID: `GET /inApps/v1/lookup/{orderId}` (the order ID from the customer's receipt email).
    package func lookUpOrderId(_ orderId: String) async throws -> OrderLookupResponse {
        let id = try segment(orderId, "order ID")
        return try await call(.get, "/inApps/v1/lookup/\(id)", as: OrderLookupResponse.self)
    }

    /// Get Refund History (v2), every page: the signed transactions Apple refunded for the customer who
    /// owns `transactionId`.
    package func getRefundHistory(transactionId: String) async throws -> [String] {
        try await collectRevisions("refund history") { revision in
            let page = try await self.getRefundHistoryPage(transactionId: transactionId, revision: revision)
            return (page.signedTransactions ?? [], page.hasMore ?? false, page.revision)
        }
    }

    /// One page of Get Refund History (v2): `GET /inApps/v2/refund/lookup/{transactionId}?revision=…`.
    package func getRefundHistoryPage(transactionId: String, revision: String? = nil) async throws -> RefundHistoryResponse {
        let id = try segment(transactionId, "transaction ID")
        let items = revision.map { [URLQueryItem(name: "revision", value: $0)] } ?? []
        return try await call(.get, "/inApps/v2/refund/lookup/\(id)", query: items, as: RefundHistoryResponse.self)
    }

    /// Follows `hasMore`/`revision` (or `paginationToken`) until the last page and concatenates the pages.
    /// A page that says `hasMore` without a new token is a bad response (retryable), as is paging past
    /// ``AppStoreServerAPIConfiguration/maximumPages``; paging past the caller's `pageLimit` throws
    /// ``PageLimitExceeded`` (the caller's own bound, not Apple's fault).
    func collectRevisions<Item>(
        _ what: String, pageLimit: Int? = nil, page: (String?) async throws -> (items: [Item], hasMore: Bool, next: String?)
    ) async throws -> [Item] {
        var collected: [Item] = []
        var token: String?
        var seen: Set<String> = []
        for index in 0..<configuration.maximumPages {
            if let pageLimit, index >= pageLimit { throw PageLimitExceeded(what: what, pages: pageLimit) }
            let result = try await page(token)
            collected += result.items
            guard result.hasMore else { return collected }
            guard let next = result.next, !next.isEmpty, seen.insert(next).inserted else {
                throw AppStoreAPIError(.badResponse, "\(what): Apple said hasMore without a new page token", isRetryable: true)
            }
            token = next
        }
        throw AppStoreAPIError(
            .badResponse, "\(what): more than \(configuration.maximumPages) pages", isRetryable: true)
    }
}

/// More pages than the caller allowed (``AppStoreServerAPIClient/getTransactionHistory(transactionId:query:pageLimit:beforePage:)``).
package struct PageLimitExceeded: Error, Sendable, CustomStringConvertible {
    package let what: String
    package let pages: Int
    package var description: String { "\(what) has more than \(pages) pages" }
}
