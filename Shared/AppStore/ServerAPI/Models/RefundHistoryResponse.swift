/// One page of Get Refund History (v2): Apple's `RefundHistoryResponse`.
package struct RefundHistoryResponse: Codable, Sendable, Hashable {
    /// Refunded transactions as JWS strings, not yet verified.
    package var signedTransactions: [String]?
    /// Pass back as `revision` to get the next page.
    package var revision: String?
    package var hasMore: Bool?

    package init(signedTransactions: [String]? = nil, revision: String? = nil, hasMore: Bool? = nil) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}
