/// The kind of subscription offer applied (Apple's `OfferType`).
/// Unknown values decode as `.unknown(raw)`.
package enum OfferType: LenientEnum {
    case introductoryOffer
    case promotionalOffer
    case subscriptionOfferCode
    case winBackOffer
    case unknown(Int)

    package init(rawValue: Int) {
        switch rawValue {
        case 1: self = .introductoryOffer
        case 2: self = .promotionalOffer
        case 3: self = .subscriptionOfferCode
        case 4: self = .winBackOffer
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: Int {
        switch self {
        case .introductoryOffer: return 1
        case .promotionalOffer: return 2
        case .subscriptionOfferCode: return 3
        case .winBackOffer: return 4
        case .unknown(let raw): return raw
        }
    }
}
