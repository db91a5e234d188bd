import Core
@preconcurrency import Crypto
import Foundation
import Logging

extension SimConfiguration {
    /// Reads the `SIM_*` variables and `LOG_LEVEL` by ``Core/EnvironmentReader``'s rules; a malformed value
    /// throws a ``Core/ConfigurationError`` naming the variable.
    init(environment: [String: String]) throws(ConfigurationError) {
        self.init()
        let reader = EnvironmentReader(environment)
        host = reader.string("SIM_HOST", default: host)
        port = try reader.int("SIM_PORT", default: port, range: 0...65535)
        notifyURL = try reader.optionalURL("SIM_NOTIFY_URL")
        sharedSecret = reader.optional("SIM_SHARED_SECRET")
        retryScale = try reader.double("SIM_RETRY_SCALE", default: retryScale, range: 1...1_000_000)
        notifyTimeout = try reader.milliseconds(
            "SIM_NOTIFY_TIMEOUT_MS", default: Int(notifyTimeout.components.seconds * 1000), range: 1...3_600_000)
        if let raw = reader.optional("SIM_API_PUBLIC_KEY") {
            apiPublicKey = try Self.publicKey(raw)
        }
        if let raw = reader.optional("SIM_API_KEYS") {
            apiKeys = try Self.apiKeys(raw)
        }
        if let raw = reader.optional("SIM_APP_APPLE_IDS") {
            appAppleIds = try Self.appAppleIds(raw)
        }
        bundleId = reader.string("SIM_BUNDLE_ID", default: bundleId)
        appAppleId = try reader.int("SIM_APP_APPLE_ID", default: appAppleId, range: 1...Int64.max)
        pageSize = try reader.int("SIM_PAGE_SIZE", default: pageSize, range: 1...200)
        logLevel = try reader.logLevel(default: logLevel)
        shutdownGrace = try reader.duration("SIM_SHUTDOWN_GRACE", default: shutdownGrace, minimum: .seconds(1))
    }

    /// A P-256 public key from inline PEM or from a file holding PEM (a public key, or a `.p8` private key
    /// whose public half is used).
    static func publicKey(_ raw: String, variable: String = "SIM_API_PUBLIC_KEY") throws(ConfigurationError) -> P256.Signing.PublicKey {
        var pem = raw
        if !raw.contains("-----BEGIN") {
            guard let data = FileManager.default.contents(atPath: raw) else {
                throw ConfigurationError(variable: variable, problem: "is neither PEM nor a readable file")
            }
            pem = String(decoding: data, as: UTF8.self)
        }
        if let key = try? P256.Signing.PublicKey(pemRepresentation: pem) { return key }
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) { return key.publicKey }
        throw ConfigurationError(variable: variable, problem: "does not hold a P-256 key in PEM")
    }

    /// `SIM_API_KEYS`: `[{"bundleId", "keyId", "publicKey"}, …]`.
    static func apiKeys(_ raw: String) throws(ConfigurationError) -> [SimAPIKey] {
        let variable = "SIM_API_KEYS"
        do {
            guard case .array(let entries) = try JSONReader.parse(Array(raw.utf8)) else {
                throw ConfigurationError(variable: variable, problem: "must be a JSON list")
            }
            var keys: [SimAPIKey] = []
            for (index, entry) in entries.enumerated() {
                let fields = try JSONFields(entry, path: "[\(index)]")
                keys.append(
                    SimAPIKey(
                        bundleId: try fields.string("bundleId"), keyId: try fields.string("keyId"),
                        publicKey: try publicKey(fields.string("publicKey"), variable: variable)))
            }
            return keys
        } catch let error as ConfigurationError {
            throw error
        } catch {
            throw ConfigurationError(variable: variable, problem: "is not a list of {bundleId, keyId, publicKey}: \(error)")
        }
    }

    /// `SIM_APP_APPLE_IDS`: `{"<bundleId>": <appAppleId>, …}`.
    static func appAppleIds(_ raw: String) throws(ConfigurationError) -> [String: Int64] {
        guard case .object(let members)? = try? JSONReader.parse(Array(raw.utf8)) else {
            throw ConfigurationError(variable: "SIM_APP_APPLE_IDS", problem: "must be a JSON object of bundle ID to app Apple ID")
        }
        var ids: [String: Int64] = [:]
        for (bundleId, value) in members {
            guard case .integer(let id) = value, id > 0 else {
                throw ConfigurationError(variable: "SIM_APP_APPLE_IDS", problem: "\(bundleId.prefix(64)) must map to a positive integer")
            }
            ids[bundleId] = id
        }
        return ids
    }
}
