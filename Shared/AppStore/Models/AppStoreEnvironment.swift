/// The App Store environment a piece of data belongs to (Apple's `Environment`: `Production`, `Sandbox`,
/// `Xcode`, `LocalTesting`). Unknown values decode as `.unknown(raw)` rather than failing.
public enum AppStoreEnvironment: Sendable, Hashable, Codable, CustomStringConvertible {
    case production
    case sandbox
    case xcode
    case localTesting
    case unknown(String)

    public init(rawValue: String) {
        switch rawValue {
        case "Production": self = .production
        case "Sandbox": self = .sandbox
        case "Xcode": self = .xcode
        case "LocalTesting": self = .localTesting
        default: self = .unknown(rawValue)
        }
    }

    /// Apple's spelling.
    public var rawValue: String {
        switch self {
        case .production: return "Production"
        case .sandbox: return "Sandbox"
        case .xcode: return "Xcode"
        case .localTesting: return "LocalTesting"
        case .unknown(let raw): return raw
        }
    }

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
