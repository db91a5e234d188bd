/// Whether the customer bought the product or has it through Family Sharing (Apple's `InAppOwnershipType`).
/// Unknown values decode as `.unknown(raw)`.
package enum InAppOwnershipType: LenientEnum {
    case familyShared
    case purchased
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "FAMILY_SHARED": self = .familyShared
        case "PURCHASED": self = .purchased
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: String {
        switch self {
        case .familyShared: return "FAMILY_SHARED"
        case .purchased: return "PURCHASED"
        case .unknown(let raw): return raw
        }
    }
}
