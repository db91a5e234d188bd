/// The App Store environment a piece of data belongs to (Apple's `Environment`: `Production`, `Sandbox`,
/// `Xcode`, `LocalTesting`). Unknown values decode as `.unknown(raw)` rather than failing.
package enum AppStoreEnvironment: Sendable, Hashable, Codable, CustomStringConvertible {
    case production
    case sandbox
    case xcode
    case localTesting
    case unknown(String)

    package init(rawValue: String) {
        switch rawValue {
        case "Production": self = .production
        case "Sandbox": self = .sandbox
        case "Xcode": self = .xcode
        case "LocalTesting": self = .localTesting
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's spelling.
    package var rawValue: String {
        switch self {
        case .production: return "Production"
        case .sandbox: return "Sandbox"
        case .xcode: return "Xcode"
        case .localTesting: return "LocalTesting"
        case .unknown(let raw): return raw
        }
    }

    package var description: String { rawValue }

    package init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
