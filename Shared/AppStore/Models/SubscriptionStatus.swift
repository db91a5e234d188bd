/// The state of an auto-renewable subscription (Apple's `Status`).
/// Unknown values decode as `.unknown(raw)`.
package enum SubscriptionStatus: LenientEnum {
    case active
    case expired
    case billingRetry
    case billingGracePeriod
    case revoked
    case unknown(Int)

    package init(rawValue: Int) {
        switch rawValue {
        case 1: self = .active
        case 2: self = .expired
        case 3: self = .billingRetry
        case 4: self = .billingGracePeriod
        case 5: self = .revoked
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: Int {
        switch self {
        case .active: return 1
        case .expired: return 2
        case .billingRetry: return 3
        case .billingGracePeriod: return 4
        case .revoked: return 5
        case .unknown(let raw): return raw
        }
    }
}
