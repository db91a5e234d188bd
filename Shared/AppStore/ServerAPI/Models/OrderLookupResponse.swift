/// The answer of Look Up Order ID: Apple's `OrderLookupResponse`.
package struct OrderLookupResponse: Codable, Sendable, Hashable {
    /// `0` the order ID is valid, `1` it is not.
    package var status: Int
    /// The order's transactions as JWS strings, not yet verified.
    package var signedTransactions: [String]?

    /// Apple found the order.
    package var isValid: Bool { status == 0 }

    package init(status: Int, signedTransactions: [String]? = nil) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}
