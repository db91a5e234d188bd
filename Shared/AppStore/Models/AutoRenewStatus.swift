/// Whether an auto-renewable subscription will renew (Apple's `AutoRenewStatus`).
/// Unknown values decode as `.unknown(raw)`.
package enum AutoRenewStatus: LenientEnum {
    case off
    case on
    case unknown(Int)

    package init(rawValue: Int) {
        switch rawValue {
        case 0: self = .off
        case 1: self = .on
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: Int {
        switch self {
        case .off: return 0
        case .on: return 1
        case .unknown(let raw): return raw
        }
    }
}
