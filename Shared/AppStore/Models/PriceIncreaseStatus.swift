/// Whether the customer consented to a subscription price increase (Apple's `PriceIncreaseStatus`).
/// Unknown values decode as `.unknown(raw)`.
package enum PriceIncreaseStatus: LenientEnum {
    case customerHasNotResponded
    case customerConsentedOrWasNotifiedWithoutNeedingConsent
    case unknown(Int)

    package init(rawValue: Int) {
        switch rawValue {
        case 0: self = .customerHasNotResponded
        case 1: self = .customerConsentedOrWasNotifiedWithoutNeedingConsent
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: Int {
        switch self {
        case .customerHasNotResponded: return 0
        case .customerConsentedOrWasNotifiedWithoutNeedingConsent: return 1
        case .unknown(let raw): return raw
        }
    }
}
