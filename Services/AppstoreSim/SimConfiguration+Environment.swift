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
        bundleId = reader.string("SIM_BUNDLE_ID", default: bundleId)
        appAppleId = try reader.int("SIM_APP_APPLE_ID", default: appAppleId, range: 1...Int64.max)
        pageSize = try reader.int("SIM_PAGE_SIZE", default: pageSize, range: 1...200)
        logLevel = try reader.logLevel(default: logLevel)
        shutdownGrace = try reader.duration("SIM_SHUTDOWN_GRACE", default: shutdownGrace, minimum: .seconds(1))
    }

    /// A P-256 public key from inline PEM or from a file holding PEM (a public key, or a `.p8` private key
    /// whose public half is used).
    static func publicKey(_ raw: String) throws(ConfigurationError) -> P256.Signing.PublicKey {
        var pem = raw
        if !raw.contains("-----BEGIN") {
            guard let data = FileManager.default.contents(atPath: raw) else {
                throw ConfigurationError(variable: "SIM_API_PUBLIC_KEY", problem: "is neither PEM nor a readable file")
            }
            pem = String(decoding: data, as: UTF8.self)
        }
        if let key = try? P256.Signing.PublicKey(pemRepresentation: pem) { return key }
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) { return key.publicKey }
        throw ConfigurationError(variable: "SIM_API_PUBLIC_KEY", problem: "does not hold a P-256 key in PEM")
    }
}
