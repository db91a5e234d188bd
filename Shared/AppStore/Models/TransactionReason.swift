/// Whether a transaction is a customer's purchase or an automatic renewal (Apple's `TransactionReason`).
/// Unknown values decode as `.unknown(raw)`.
package enum TransactionReason: LenientEnum {
    case purchase
    case renewal
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "PURCHASE": self = .purchase
        case "RENEWAL": self = .renewal
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: String {
        switch self {
        case .purchase: return "PURCHASE"
        case .renewal: return "RENEWAL"
        case .unknown(let raw): return raw
        }
    }
}
