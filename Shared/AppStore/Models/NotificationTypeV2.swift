/// The kind of an App Store Server Notification V2 (Apple's `notificationType`).
/// Unknown values decode as `.unknown(raw)`.
package enum NotificationTypeV2: LenientEnum {
    case subscribed
    case didChangeRenewalPref
    case didChangeRenewalStatus
    case offerRedeemed
    case didRenew
    case expired
    case didFailToRenew
    case gracePeriodExpired
    case priceIncrease
    case refund
    case refundDeclined
    case consumptionRequest
    case renewalExtended
    case revoke
    case test
    case renewalExtension
    case refundReversed
    case externalPurchaseToken
    case oneTimeCharge
    case metadataUpdate
    case migration
    case priceChange
    case rescindConsent
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "SUBSCRIBED": self = .subscribed
        case "DID_CHANGE_RENEWAL_PREF": self = .didChangeRenewalPref
        case "DID_CHANGE_RENEWAL_STATUS": self = .didChangeRenewalStatus
        case "OFFER_REDEEMED": self = .offerRedeemed
        case "DID_RENEW": self = .didRenew
        case "EXPIRED": self = .expired
        case "DID_FAIL_TO_RENEW": self = .didFailToRenew
        case "GRACE_PERIOD_EXPIRED": self = .gracePeriodExpired
        case "PRICE_INCREASE": self = .priceIncrease
        case "REFUND": self = .refund
        case "REFUND_DECLINED": self = .refundDeclined
        case "CONSUMPTION_REQUEST": self = .consumptionRequest
        case "RENEWAL_EXTENDED": self = .renewalExtended
        case "REVOKE": self = .revoke
        case "TEST": self = .test
        case "RENEWAL_EXTENSION": self = .renewalExtension
        case "REFUND_REVERSED": self = .refundReversed
        case "EXTERNAL_PURCHASE_TOKEN": self = .externalPurchaseToken
        case "ONE_TIME_CHARGE": self = .oneTimeCharge
        case "METADATA_UPDATE": self = .metadataUpdate
        case "MIGRATION": self = .migration
        case "PRICE_CHANGE": self = .priceChange
        case "RESCIND_CONSENT": self = .rescindConsent
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: String {
        switch self {
        case .subscribed: return "SUBSCRIBED"
        case .didChangeRenewalPref: return "DID_CHANGE_RENEWAL_PREF"
        case .didChangeRenewalStatus: return "DID_CHANGE_RENEWAL_STATUS"
        case .offerRedeemed: return "OFFER_REDEEMED"
        case .didRenew: return "DID_RENEW"
        case .expired: return "EXPIRED"
        case .didFailToRenew: return "DID_FAIL_TO_RENEW"
        case .gracePeriodExpired: return "GRACE_PERIOD_EXPIRED"
        case .priceIncrease: return "PRICE_INCREASE"
        case .refund: return "REFUND"
        case .refundDeclined: return "REFUND_DECLINED"
        case .consumptionRequest: return "CONSUMPTION_REQUEST"
        case .renewalExtended: return "RENEWAL_EXTENDED"
        case .revoke: return "REVOKE"
        case .test: return "TEST"
        case .renewalExtension: return "RENEWAL_EXTENSION"
        case .refundReversed: return "REFUND_REVERSED"
        case .externalPurchaseToken: return "EXTERNAL_PURCHASE_TOKEN"
        case .oneTimeCharge: return "ONE_TIME_CHARGE"
        case .metadataUpdate: return "METADATA_UPDATE"
        case .migration: return "MIGRATION"
        case .priceChange: return "PRICE_CHANGE"
        case .rescindConsent: return "RESCIND_CONSENT"
        case .unknown(let raw): return raw
        }
    }
}
