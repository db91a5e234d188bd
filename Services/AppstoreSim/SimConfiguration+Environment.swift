@preconcurrency import Crypto
import Foundation
import Logging

extension SimConfiguration {
    /// Reads the `SIM_*` variables; a malformed value fails with a message naming the variable.
    init(environment: [String: String]) throws(SimConfigurationError) {
        self.init()
        func value(_ name: String) -> String? {
            guard let raw = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !raw.isEmpty else {
                return nil
            }
            return raw
        }
        if let host = value("SIM_HOST") { self.host = host }
        if let raw = value("SIM_PORT") {
            guard let port = Int(raw), (0...65535).contains(port) else {
                throw SimConfigurationError("SIM_PORT must be a port number (0-65535), not '\(raw)'")
            }
            self.port = port
        }
        if let raw = value("SIM_NOTIFY_URL") {
            guard let url = URL(string: raw), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme),
                  url.host != nil else {
                throw SimConfigurationError("SIM_NOTIFY_URL must be an http(s) URL")
            }
            notifyURL = url
        }
        sharedSecret = value("SIM_SHARED_SECRET")
        if let raw = value("SIM_RETRY_SCALE") {
            guard let scale = Double(raw), scale.isFinite, scale >= 1 else {
                throw SimConfigurationError("SIM_RETRY_SCALE must be a number >= 1, not '\(raw)'")
            }
            retryScale = scale
        }
        if let raw = value("SIM_NOTIFY_TIMEOUT_MS") {
            guard let millis = Int64(raw), millis > 0 else {
                throw SimConfigurationError("SIM_NOTIFY_TIMEOUT_MS must be a positive number of milliseconds")
            }
            notifyTimeout = .milliseconds(millis)
        }
        if let raw = value("SIM_API_PUBLIC_KEY") {
            apiPublicKey = try Self.publicKey(raw)
        }
        if let bundleId = value("SIM_BUNDLE_ID") { self.bundleId = bundleId }
        if let raw = value("SIM_APP_APPLE_ID") {
            guard let id = Int64(raw), id > 0 else {
                throw SimConfigurationError("SIM_APP_APPLE_ID must be a positive integer")
            }
            appAppleId = id
        }
        if let raw = value("SIM_PAGE_SIZE") {
            guard let size = Int(raw), (1...200).contains(size) else {
                throw SimConfigurationError("SIM_PAGE_SIZE must be between 1 and 200")
            }
            pageSize = size
        }
        if let raw = value("LOG_LEVEL") {
            guard let level = Logger.Level(rawValue: raw.lowercased()) else {
                throw SimConfigurationError("LOG_LEVEL must be one of trace, debug, info, notice, warning, error, critical")
            }
            logLevel = level
        }
    }

    /// A P-256 public key from inline PEM or from a file holding PEM (a public key, or a `.p8` private key
    /// whose public half is used).
    static func publicKey(_ raw: String) throws(SimConfigurationError) -> P256.Signing.PublicKey {
        var pem = raw
        if !raw.contains("-----BEGIN") {
            guard let data = FileManager.default.contents(atPath: raw) else {
                throw SimConfigurationError("SIM_API_PUBLIC_KEY is neither PEM nor a readable file")
            }
            pem = String(decoding: data, as: UTF8.self)
        }
        if let key = try? P256.Signing.PublicKey(pemRepresentation: pem) { return key }
        if let key = try? P256.Signing.PrivateKey(pemRepresentation: pem) { return key.publicKey }
        throw SimConfigurationError("SIM_API_PUBLIC_KEY does not hold a P-256 key in PEM")
    }
}
