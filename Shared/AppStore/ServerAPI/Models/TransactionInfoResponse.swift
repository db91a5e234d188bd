/// The answer of Get Transaction Info: Apple's `TransactionInfoResponse`.
public struct TransactionInfoResponse: Codable, Sendable, Hashable {
    /// The transaction as a JWS (`JWSTransaction`), not yet verified.
    public var signedTransactionInfo: String

    public init(signedTransactionInfo: String) {
        self.signedTransactionInfo = signedTransactionInfo
    }
}
