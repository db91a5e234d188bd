/// Details of a V2 notification's kind (Apple's `Subtype`).
/// Unknown values decode as `.unknown(raw)`.
package enum NotificationSubtype: LenientEnum {
    case initialBuy
    case resubscribe
    case downgrade
    case upgrade
    case autoRenewEnabled
    case autoRenewDisabled
    case voluntary
    case billingRetry
    case priceIncrease
    case gracePeriod
    case pending
    case accepted
    case billingRecovery
    case productNotForSale
    case summary
    case failure
    case unreported
    case created
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "INITIAL_BUY": self = .initialBuy
        case "RESUBSCRIBE": self = .resubscribe
        case "DOWNGRADE": self = .downgrade
        case "UPGRADE": self = .upgrade
        case "AUTO_RENEW_ENABLED": self = .autoRenewEnabled
        case "AUTO_RENEW_DISABLED": self = .autoRenewDisabled
        case "VOLUNTARY": self = .voluntary
        case "BILLING_RETRY": self = .billingRetry
        case "PRICE_INCREASE": self = .priceIncrease
        case "GRACE_PERIOD": self = .gracePeriod
        case "PENDING": self = .pending
        case "ACCEPTED": self = .accepted
        case "BILLING_RECOVERY": self = .billingRecovery
        case "PRODUCT_NOT_FOR_SALE": self = .productNotForSale
        case "SUMMARY": self = .summary
        case "FAILURE": self = .failure
        case "UNREPORTED": self = .unreported
        case "CREATED": self = .created
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: String {
        switch self {
        case .initialBuy: return "INITIAL_BUY"
        case .resubscribe: return "RESUBSCRIBE"
        case .downgrade: return "DOWNGRADE"
        case .upgrade: return "UPGRADE"
        case .autoRenewEnabled: return "AUTO_RENEW_ENABLED"
        case .autoRenewDisabled: return "AUTO_RENEW_DISABLED"
        case .voluntary: return "VOLUNTARY"
        case .billingRetry: return "BILLING_RETRY"
        case .priceIncrease: return "PRICE_INCREASE"
        case .gracePeriod: return "GRACE_PERIOD"
        case .pending: return "PENDING"
        case .accepted: return "ACCEPTED"
        case .billingRecovery: return "BILLING_RECOVERY"
        case .productNotForSale: return "PRODUCT_NOT_FOR_SALE"
        case .summary: return "SUMMARY"
        case .failure: return "FAILURE"
        case .unreported: return "UNREPORTED"
        case .created: return "CREATED"
        case .unknown(let raw): return raw
        }
    }
}
