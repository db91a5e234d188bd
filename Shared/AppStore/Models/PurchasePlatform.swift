/// The platform on which the customer first bought the app (Apple's `PurchasePlatform`).
/// Unknown values decode as `.unknown(raw)`.
package enum PurchasePlatform: LenientEnum {
    case iOS
    case macOS
    case tvOS
    case visionOS
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "iOS": self = .iOS
        case "macOS": self = .macOS
        case "tvOS": self = .tvOS
        case "visionOS": self = .visionOS
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's value.
    package var rawValue: String {
        switch self {
        case .iOS: return "iOS"
        case .macOS: return "macOS"
        case .tvOS: return "tvOS"
        case .visionOS: return "visionOS"
        case .unknown(let raw): return raw
        }
    }
}
