/// One page of Get Transaction History (v2): Apple's `HistoryResponse`.
package struct HistoryResponse: Codable, Sendable, Hashable {
    /// Pass back as `revision` to get the next page.
    package var revision: String?
    package var hasMore: Bool?
    package var bundleId: String?
    package var appAppleId: Int64?
    package var environment: AppStoreEnvironment?
    /// Transactions as JWS strings, not yet verified.
    package var signedTransactions: [String]?

    package init(
        revision: String? = nil, hasMore: Bool? = nil, bundleId: String? = nil, appAppleId: Int64? = nil,
        environment: AppStoreEnvironment? = nil, signedTransactions: [String]? = nil
    ) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}
