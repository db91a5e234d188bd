/// The kind of offer applied (Apple's `OfferType`).
/// Unknown values decode as `.unknown(raw)`.
package enum OfferType: LenientEnum {
    case introductoryOffer
    case promotionalOffer
    /// An offer code (Apple's `OFFER_CODE`, once "subscription offer code"; offer codes now apply to every
    /// product type).
    case offerCode
    case winBackOffer
    case unknown(Int)

    package init(rawValue: Int) {
        switch rawValue {
        case 1: self = .introductoryOffer
        case 2: self = .promotionalOffer
        case 3: self = .offerCode
        case 4: self = .winBackOffer
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: Int {
        switch self {
        case .introductoryOffer: return 1
        case .promotionalOffer: return 2
        case .offerCode: return 3
        case .winBackOffer: return 4
        case .unknown(let raw): return raw
        }
    }
}
