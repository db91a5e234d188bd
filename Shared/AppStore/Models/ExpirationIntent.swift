/// Why a subscription expired (Apple's `ExpirationIntent`).
/// Unknown values decode as `.unknown(raw)`.
package enum ExpirationIntent: LenientEnum {
    case customerCancelled
    case billingError
    case customerDidNotConsentToPriceIncrease
    case productNotAvailable
    case other
    case unknown(Int)

    package init(rawValue: Int) {
        switch rawValue {
        case 1: self = .customerCancelled
        case 2: self = .billingError
        case 3: self = .customerDidNotConsentToPriceIncrease
        case 4: self = .productNotAvailable
        case 5: self = .other
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: Int {
        switch self {
        case .customerCancelled: return 1
        case .billingError: return 2
        case .customerDidNotConsentToPriceIncrease: return 3
        case .productNotAvailable: return 4
        case .other: return 5
        case .unknown(let raw): return raw
        }
    }
}
