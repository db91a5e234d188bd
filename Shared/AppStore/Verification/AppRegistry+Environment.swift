package import Core
import Foundation

extension AppRegistry {
    /// The variable naming the apps file.
    package static let variable = "TOLLGATE_APPS"
    /// The one-app shorthand's variables, which `TOLLGATE_APPS` replaces.
    static let shorthandVariables = [
        "TOLLGATE_BUNDLE_ID", "TOLLGATE_APP_APPLE_ID", "TOLLGATE_SHARED_SECRET", "TOLLGATE_API_KEY_ID", "TOLLGATE_API_ISSUER_ID",
        "TOLLGATE_API_PRIVATE_KEY_PATH", "TOLLGATE_OFFER_KEY_ID", "TOLLGATE_OFFER_ISSUER_ID", "TOLLGATE_OFFER_PRIVATE_KEY_PATH",
    ]

    /// Reads the apps (see ``AppRegistry``): `TOLLGATE_APPS`, or the one-app shorthand. A missing or invalid setting
    /// throws, naming it.
    package init(reader: EnvironmentReader) throws(ConfigurationError) {
        let environment: AppStoreEnvironment
        switch reader.string("TOLLGATE_ENVIRONMENT", default: "sandbox").lowercased() {
        case "production": environment = .production
        case "sandbox": environment = .sandbox
        default: throw ConfigurationError(variable: "TOLLGATE_ENVIRONMENT", problem: "must be production or sandbox")
        }
        let acceptsSandbox = try reader.bool("TOLLGATE_ACCEPT_SANDBOX", default: false)
        if let path = reader.optional(Self.variable) {
            if let clash = Self.shorthandVariables.first(where: { reader.optional($0) != nil }) {
                throw ConfigurationError(
                    variable: Self.variable, problem: "cannot be combined with \(clash): the file lists every app's settings")
            }
            self = try Self(file: path, environment: environment, acceptsSandbox: acceptsSandbox)
            return
        }
        let bundleId = try reader.required("TOLLGATE_BUNDLE_ID")
        var appAppleId: Int64?
        if reader.optional("TOLLGATE_APP_APPLE_ID") != nil {
            appAppleId = try reader.int("TOLLGATE_APP_APPLE_ID", default: Int64(0), range: 1...Int64.max)
        } else if environment == .production {
            throw ConfigurationError(variable: "TOLLGATE_APP_APPLE_ID", problem: "is required in production")
        }
        let app = ConfiguredApp(
            bundleId: bundleId, appAppleId: appAppleId, apiKey: try Self.shorthandAPIKey(reader),
            sharedSecret: reader.optional("TOLLGATE_SHARED_SECRET"), offerKey: try Self.shorthandOfferKey(reader))
        self.init(apps: [app], environment: environment, acceptsSandbox: acceptsSandbox)
    }

    /// `TOLLGATE_API_KEY_ID`, `TOLLGATE_API_ISSUER_ID`, `TOLLGATE_API_PRIVATE_KEY_PATH`: all three or none.
    private static func shorthandAPIKey(_ reader: EnvironmentReader) throws(ConfigurationError) -> AppStoreKey? {
        let keyId = reader.optional("TOLLGATE_API_KEY_ID")
        let issuerId = reader.optional("TOLLGATE_API_ISSUER_ID")
        let path = reader.optional("TOLLGATE_API_PRIVATE_KEY_PATH")
        if keyId == nil, issuerId == nil, path == nil { return nil }
        guard let keyId else {
            throw ConfigurationError(variable: "TOLLGATE_API_KEY_ID", problem: "is required with the other API key settings")
        }
        guard let issuerId else {
            throw ConfigurationError(variable: "TOLLGATE_API_ISSUER_ID", problem: "is required with the other API key settings")
        }
        guard let path else {
            throw ConfigurationError(variable: "TOLLGATE_API_PRIVATE_KEY_PATH", problem: "is required with the other API key settings")
        }
        guard let data = FileManager.default.contents(atPath: path), let pem = String(data: data, encoding: .utf8),
            pem.contains("PRIVATE KEY")
        else {
            throw ConfigurationError(variable: "TOLLGATE_API_PRIVATE_KEY_PATH", problem: "cannot read a PEM private key at \(path)")
        }
        return AppStoreKey(keyId: keyId, issuerId: issuerId, privateKeyPEM: pem)
    }

    /// `TOLLGATE_OFFER_KEY_ID`, `TOLLGATE_OFFER_ISSUER_ID`, `TOLLGATE_OFFER_PRIVATE_KEY_PATH`: all three or none. The
    /// PEM is parsed by its user (ingest's `OfferSigningKey`), which names the path's variable when it is no P-256 key.
    private static func shorthandOfferKey(_ reader: EnvironmentReader) throws(ConfigurationError) -> AppStoreKey? {
        let names = ["TOLLGATE_OFFER_KEY_ID", "TOLLGATE_OFFER_ISSUER_ID", "TOLLGATE_OFFER_PRIVATE_KEY_PATH"]
        guard names.contains(where: { reader.optional($0) != nil }) else { return nil }
        let keyId = try reader.required(names[0], "with the other TOLLGATE_OFFER_* settings")
        let issuerId = try reader.required(names[1], "with the other TOLLGATE_OFFER_* settings")
        let path = try reader.required(names[2], "with the other TOLLGATE_OFFER_* settings")
        guard let pem = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
            throw ConfigurationError(variable: names[2], problem: "cannot read \(path)")
        }
        return AppStoreKey(keyId: keyId, issuerId: issuerId, privateKeyPEM: pem)
    }
}
