/// The type of an in-app purchase product (Apple's `Type`).
/// Unknown values decode as `.unknown(raw)`.
package enum ProductType: LenientEnum {
    case autoRenewableSubscription
    case nonConsumable
    case consumable
    case nonRenewingSubscription
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "Auto-Renewable Subscription": self = .autoRenewableSubscription
        case "Non-Consumable": self = .nonConsumable
        case "Consumable": self = .consumable
        case "Non-Renewing Subscription": self = .nonRenewingSubscription
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: String {
        switch self {
        case .autoRenewableSubscription: return "Auto-Renewable Subscription"
        case .nonConsumable: return "Non-Consumable"
        case .consumable: return "Consumable"
        case .nonRenewingSubscription: return "Non-Renewing Subscription"
        case .unknown(let raw): return raw
        }
    }
}
