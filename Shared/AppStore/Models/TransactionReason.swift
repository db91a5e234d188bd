/// Whether a transaction is a customer's purchase or an automatic renewal (Apple's `TransactionReason`).
/// Unknown values decode as `.unknown(raw)`.
public enum TransactionReason: LenientEnum {
    case purchase
    case renewal
    case unknown(String)

    public init(rawValue: String) {
        switch rawValue {
        case "PURCHASE": self = .purchase
        case "RENEWAL": self = .renewal
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    public var rawValue: String {
        switch self {
        case .purchase: return "PURCHASE"
        case .renewal: return "RENEWAL"
        case .unknown(let raw): return raw
        }
    }
}
