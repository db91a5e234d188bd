/// Whether an auto-renewable subscription will renew (Apple's `AutoRenewStatus`).
/// Unknown values decode as `.unknown(raw)`.
public enum AutoRenewStatus: LenientEnum {
    case off
    case on
    case unknown(Int)

    public init(rawValue: Int) {
        switch rawValue {
        case 0: self = .off
        case 1: self = .on
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    public var rawValue: Int {
        switch self {
        case .off: return 0
        case .on: return 1
        case .unknown(let raw): return raw
        }
    }
}
