/// The answer of Get Transaction Info: Apple's `TransactionInfoResponse`.
package struct TransactionInfoResponse: Codable, Sendable, Hashable {
    /// The transaction as a JWS (`JWSTransaction`), not yet verified.
    package var signedTransactionInfo: String

    package init(signedTransactionInfo: String) {
        self.signedTransactionInfo = signedTransactionInfo
    }
}
