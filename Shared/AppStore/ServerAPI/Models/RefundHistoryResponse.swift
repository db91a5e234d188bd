/// One page of Get Refund History (v2): Apple's `RefundHistoryResponse`.
public struct RefundHistoryResponse: Codable, Sendable, Hashable {
    /// Refunded transactions as JWS strings, not yet verified.
    public var signedTransactions: [String]?
    /// Pass back as `revision` to get the next page.
    public var revision: String?
    public var hasMore: Bool?

    public init(signedTransactions: [String]? = nil, revision: String? = nil, hasMore: Bool? = nil) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}
