import Core

/// The app whose App Store data a deployment takes, and from which environments: what the verifier checks on every
/// signed payload and ingest checks on every anonymous notification before it stores it. Read once, by one rule,
/// from the shared settings:
/// - `TOLLGATE_BUNDLE_ID` — the app's bundle ID (required)
/// - `TOLLGATE_ENVIRONMENT` — `production` or `sandbox` [`sandbox`]
/// - `TOLLGATE_APP_APPLE_ID` — the app's Apple ID (required in production)
/// - `TOLLGATE_ACCEPT_SANDBOX` — production also takes sandbox data, for App Review [`false`]
package struct AppIdentity: Sendable, Hashable {
    package var bundleId: String
    package var appAppleId: Int64?
    package var environment: AppStoreEnvironment
    package var acceptsSandbox: Bool

    package init(bundleId: String, appAppleId: Int64? = nil, environment: AppStoreEnvironment = .sandbox, acceptsSandbox: Bool = false) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.acceptsSandbox = acceptsSandbox
    }

    /// Reads the four settings; a missing or invalid one throws, naming it.
    package init(reader: EnvironmentReader) throws(ConfigurationError) {
        let bundleId = try reader.required("TOLLGATE_BUNDLE_ID")
        let name = reader.string("TOLLGATE_ENVIRONMENT", default: "sandbox").lowercased()
        let environment: AppStoreEnvironment
        switch name {
        case "production": environment = .production
        case "sandbox": environment = .sandbox
        default: throw ConfigurationError(variable: "TOLLGATE_ENVIRONMENT", problem: "must be production or sandbox")
        }
        var appAppleId: Int64?
        if reader.optional("TOLLGATE_APP_APPLE_ID") != nil {
            appAppleId = try reader.int("TOLLGATE_APP_APPLE_ID", default: Int64(0), range: 1...Int64.max)
        } else if environment == .production {
            throw ConfigurationError(variable: "TOLLGATE_APP_APPLE_ID", problem: "is required in production")
        }
        self.init(
            bundleId: bundleId, appAppleId: appAppleId, environment: environment,
            acceptsSandbox: try reader.bool("TOLLGATE_ACCEPT_SANDBOX", default: false))
    }
}
