/// The payment mode of a subscription offer (Apple's `OfferDiscountType`).
/// Unknown values decode as `.unknown(raw)`.
package enum OfferDiscountType: LenientEnum {
    case freeTrial
    case payAsYouGo
    case payUpFront
    case oneTime
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "FREE_TRIAL": self = .freeTrial
        case "PAY_AS_YOU_GO": self = .payAsYouGo
        case "PAY_UP_FRONT": self = .payUpFront
        case "ONE_TIME": self = .oneTime
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: String {
        switch self {
        case .freeTrial: return "FREE_TRIAL"
        case .payAsYouGo: return "PAY_AS_YOU_GO"
        case .payUpFront: return "PAY_UP_FRONT"
        case .oneTime: return "ONE_TIME"
        case .unknown(let raw): return raw
        }
    }
}
