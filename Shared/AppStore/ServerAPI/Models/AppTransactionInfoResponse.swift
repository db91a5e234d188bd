/// The answer of Get App Transaction Info: Apple's `AppTransactionInfoResponse`.
package struct AppTransactionInfoResponse: Codable, Sendable, Hashable {
    /// The customer's app transaction, a JWS signed by the App Store.
    package var signedAppTransactionInfo: String

    package init(signedAppTransactionInfo: String) {
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
