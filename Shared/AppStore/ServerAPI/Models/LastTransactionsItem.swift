/// The status of one subscription and its latest signed transaction and renewal info: Apple's
/// `LastTransactionsItem`.
public struct LastTransactionsItem: Codable, Sendable, Hashable {
    /// `1` active, `2` expired, `3` billing retry, `4` grace period, `5` revoked.
    public var status: SubscriptionStatus?
    public var originalTransactionId: String?
    /// JWS, not yet verified.
    public var signedTransactionInfo: String?
    /// JWS, not yet verified.
    public var signedRenewalInfo: String?

    public init(
        status: SubscriptionStatus? = nil, originalTransactionId: String? = nil, signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil
    ) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}
