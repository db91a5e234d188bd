/// How a refund was granted (Apple's `RevocationType`).
/// Unknown values decode as `.unknown(raw)`.
package enum RevocationType: LenientEnum {
    case refundFull
    case refundProrated
    case familyRevoke
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "REFUND_FULL": self = .refundFull
        case "REFUND_PRORATED": self = .refundProrated
        case "FAMILY_REVOKE": self = .familyRevoke
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: String {
        switch self {
        case .refundFull: return "REFUND_FULL"
        case .refundProrated: return "REFUND_PRORATED"
        case .familyRevoke: return "FAMILY_REVOKE"
        case .unknown(let raw): return raw
        }
    }
}
