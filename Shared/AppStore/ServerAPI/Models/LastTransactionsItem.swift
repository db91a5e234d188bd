/// The status of one subscription and its latest signed transaction and renewal info: Apple's
/// `LastTransactionsItem`.
package struct LastTransactionsItem: Codable, Sendable, Hashable {
    /// `1` active, `2` expired, `3` billing retry, `4` grace period, `5` revoked.
    package var status: SubscriptionStatus?
    package var originalTransactionId: String?
    /// JWS, not yet verified.
    package var signedTransactionInfo: String?
    /// JWS, not yet verified.
    package var signedRenewalInfo: String?

    package init(
        status: SubscriptionStatus? = nil, originalTransactionId: String? = nil, signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil
    ) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}
