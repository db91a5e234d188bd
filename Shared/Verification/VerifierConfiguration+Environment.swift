import AppStore
package import Core
package import Foundation
import HTTPClient
import Pipeline
import ServiceKit

extension VerifierConfiguration: ServiceConfiguration {
    /// Reads and validates every key listed on ``VerifierConfiguration`` from `environment` by
    /// ``Core/EnvironmentReader``'s rules; a missing or invalid value throws a ``Core/ConfigurationError``
    /// naming the variable.
    package init(environment: [String: String]) throws(ConfigurationError) {
        let reader = EnvironmentReader(environment)
        let shared = try SharedConfiguration(reader: reader)
        let registry = try AppRegistry(reader: reader)
        let app = registry.defaultApp
        let appStoreEnvironment = registry.environment
        self.init(shared: shared, bundleId: app.bundleId, appAppleId: app.appAppleId, environment: registry.environment)

        acceptSandbox = registry.acceptsSandbox
        sharedSecret = app.sharedSecret
        apiKey = app.apiKey
        additionalApps = Array(registry.apps.dropFirst())
        if registry.hasProjects { projects = registry.projects }
        if let list = reader.optional("TOLLGATE_ROOT_CERTS") {
            do {
                rootCertificates = try TrustedRootLoader.load(list: list)
            } catch {
                throw ConfigurationError(variable: "TOLLGATE_ROOT_CERTS", problem: "is not usable: \(error.message)")
            }
        }
        verifyReceiptURL = try reader.url("TOLLGATE_VERIFY_RECEIPT_URL", default: verifyReceiptURL)
        verifyReceiptSandboxURL = try reader.url("TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL", default: verifyReceiptSandboxURL)
        apiURL = try reader.url("TOLLGATE_APPSTORE_API_URL", default: apiURL)
        apiSandboxURL = try reader.url("TOLLGATE_APPSTORE_API_SANDBOX_URL", default: apiSandboxURL)
        if appStoreEnvironment == .production {
            for (name, url) in [
                ("TOLLGATE_VERIFY_RECEIPT_URL", verifyReceiptURL), ("TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL", verifyReceiptSandboxURL),
                ("TOLLGATE_APPSTORE_API_URL", apiURL), ("TOLLGATE_APPSTORE_API_SANDBOX_URL", apiSandboxURL),
            ]
            where !Self.isProtected(url) {
                throw ConfigurationError(variable: name, problem: "must be https:// in production (plain http only to a loopback address)")
            }
        }
        confirmWithAPI = try reader.bool("TOLLGATE_CONFIRM_WITH_API", default: false)
        includeAppleJWS = try reader.bool("TOLLGATE_EVENTS_INCLUDE_APPLE", default: false)
        let validation = reader.string("TOLLGATE_RECEIPT_VALIDATION", default: ReceiptValidationMode.auto.rawValue).lowercased()
        guard let mode = ReceiptValidationMode(rawValue: validation) else {
            throw ConfigurationError(
                variable: "TOLLGATE_RECEIPT_VALIDATION",
                problem: "must be verify-receipt, server-api or auto, not '\(validation.prefix(32))'")
        }
        guard mode != .serverAPI || apps.allSatisfy({ $0.apiKey != nil }) else {
            throw ConfigurationError(
                variable: "TOLLGATE_RECEIPT_VALIDATION",
                problem:
                    "server-api needs an App Store Server API key "
                    + "(TOLLGATE_API_KEY_ID, TOLLGATE_API_ISSUER_ID, TOLLGATE_API_PRIVATE_KEY_PATH; every app's apiKey in TOLLGATE_APPS)")
        }
        receiptValidation = mode
        if let list = reader.optional("TOLLGATE_RECEIPT_ROOT_CERTS") {
            do {
                receiptRootCertificates = try TrustedRootLoader.load(list: list)
            } catch {
                throw ConfigurationError(variable: "TOLLGATE_RECEIPT_ROOT_CERTS", problem: "is not usable: \(error.message)")
            }
        }
        if let list = reader.optional("TOLLGATE_RECEIPT_INTERMEDIATE_CERTS") {
            do {
                receiptIntermediates = try TrustedRootLoader.load(list: list)
            } catch {
                throw ConfigurationError(variable: "TOLLGATE_RECEIPT_INTERMEDIATE_CERTS", problem: "is not usable: \(error.message)")
            }
        }
        receiptMaxHistoryPages = try reader.int("TOLLGATE_RECEIPT_MAX_HISTORY_PAGES", default: receiptMaxHistoryPages, range: 1...1000)
        userAppleCallsPerHour = try reader.int("TOLLGATE_USER_APPLE_CALLS", default: userAppleCallsPerHour, range: 0...1_000_000)
        receiptMemory = try reader.duration("TOLLGATE_RECEIPT_MEMORY", default: receiptMemory, minimum: .zero)
        onlineChecks = try reader.bool("TOLLGATE_ONLINE_CHECKS", default: false)
        onlineChainLifetime = try reader.duration(
            "TOLLGATE_ONLINE_CHAIN_LIFETIME", default: onlineChainLifetime, minimum: .seconds(1))
        refundPreference = try reader.int("TOLLGATE_REFUND_PREFERENCE", default: 0, range: 0...3)
        switch reader.string("TOLLGATE_CONSUMPTION_API", default: "v2") {
        case "v2": consumptionAPIVersion = 2
        case "v1": consumptionAPIVersion = 1
        default: throw ConfigurationError(variable: "TOLLGATE_CONSUMPTION_API", problem: "must be v2 or v1")
        }
        sampleContentProvided = try reader.bool("TOLLGATE_SAMPLE_CONTENT_PROVIDED", default: false)
        apiRateScale = Double(try reader.int("TOLLGATE_API_RATE_SCALE_PERCENT", default: 100, range: 1...1000)) / 100
        metricsHost = reader.string("TOLLGATE_METRICS_HOST", default: "0.0.0.0")
        metricsPort = try reader.int("TOLLGATE_METRICS_PORT", default: 9090, range: 0...65535)
        concurrency = try reader.int("TOLLGATE_VERIFIER_CONCURRENCY", default: 64, range: 1...4096)
        let base = try reader.int("TOLLGATE_RETRY_BASE_MS", default: 2000, range: 1...86_400_000)
        let cap = try reader.int("TOLLGATE_RETRY_CAP_MS", default: 900_000, range: 1...604_800_000)
        let attempts = try reader.int("TOLLGATE_RETRY_MAX_ATTEMPTS", default: 10, range: 1...1000)
        retry = RetryPolicy(base: .milliseconds(base), cap: .milliseconds(max(base, cap)), maxAttempts: attempts)
        appleTimeout = try reader.milliseconds("TOLLGATE_APPLE_TIMEOUT_MS", default: 10_000, range: 100...600_000)
        let transportName = reader.string("TOLLGATE_HTTP_TRANSPORT", default: httpTransport.rawValue).lowercased()
        guard let transport = HTTPTransportKind(rawValue: transportName) else {
            throw ConfigurationError(
                variable: "TOLLGATE_HTTP_TRANSPORT", problem: "must be curl or urlsession, not '\(transportName.prefix(32))'")
        }
        httpTransport = transport
        let minIdle = try reader.int("TOLLGATE_CLAIM_MIN_IDLE_MS", default: 60_000, range: 100...86_400_000)
        claimMinIdle = .milliseconds(minIdle)
        claimInterval = try reader.milliseconds("TOLLGATE_CLAIM_INTERVAL_MS", default: 5000, range: 10...600_000)
        heartbeatInterval = try reader.milliseconds("TOLLGATE_HEARTBEAT_MS", default: max(10, minIdle / 4), range: 10...86_400_000)
        guard heartbeatInterval < claimMinIdle else {
            throw ConfigurationError(variable: "TOLLGATE_HEARTBEAT_MS", problem: "must be below TOLLGATE_CLAIM_MIN_IDLE_MS")
        }
        reconcile = try ReconcilerConfiguration(reader: reader)
    }

    /// Whether Apple's answers from `url` cannot be changed on the way: HTTPS, or plain HTTP to this host itself
    /// (a local TLS-terminating proxy, or the simulator in a test), as ``Core/Loopback`` says.
    package static func isProtected(_ url: URL) -> Bool {
        if url.scheme?.lowercased() == "https" { return true }
        guard let host = url.host else { return false }
        return Loopback.contains(host: host)
    }
}
