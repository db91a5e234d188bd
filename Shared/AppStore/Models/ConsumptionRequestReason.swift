/// Why the customer asked for a refund of a consumable (Apple's `ConsumptionRequestReason`).
/// Unknown values decode as `.unknown(raw)`.
package enum ConsumptionRequestReason: LenientEnum {
    case unintendedPurchase
    case fulfillmentIssue
    case unsatisfiedWithPurchase
    case legal
    case other
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "UNINTENDED_PURCHASE": self = .unintendedPurchase
        case "FULFILLMENT_ISSUE": self = .fulfillmentIssue
        case "UNSATISFIED_WITH_PURCHASE": self = .unsatisfiedWithPurchase
        case "LEGAL": self = .legal
        case "OTHER": self = .other
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: String {
        switch self {
        case .unintendedPurchase: return "UNINTENDED_PURCHASE"
        case .fulfillmentIssue: return "FULFILLMENT_ISSUE"
        case .unsatisfiedWithPurchase: return "UNSATISFIED_WITH_PURCHASE"
        case .legal: return "LEGAL"
        case .other: return "OTHER"
        case .unknown(let raw): return raw
        }
    }
}
