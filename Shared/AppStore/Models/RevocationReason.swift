/// Why the App Store refunded or revoked a transaction (Apple's `RevocationReason`).
/// Unknown values decode as `.unknown(raw)`.
package enum RevocationReason: LenientEnum {
    case other
    case appIssue
    case unknown(Int)

    package init(rawValue: Int) {
        switch rawValue {
        case 0: self = .other
        case 1: self = .appIssue
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: Int {
        switch self {
        case .other: return 0
        case .appIssue: return 1
        case .unknown(let raw): return raw
        }
    }
}
