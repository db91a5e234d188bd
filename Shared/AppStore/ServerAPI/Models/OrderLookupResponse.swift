/// The answer of Look Up Order ID: Apple's `OrderLookupResponse`.
public struct OrderLookupResponse: Codable, Sendable, Hashable {
    /// `0` the order ID is valid, `1` it is not.
    public var status: Int
    /// The order's transactions as JWS strings, not yet verified.
    public var signedTransactions: [String]?

    /// Apple found the order.
    public var isValid: Bool { status == 0 }

    public init(status: Int, signedTransactions: [String]? = nil) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}
