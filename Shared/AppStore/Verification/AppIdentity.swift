package import Core

/// The apps whose App Store data a deployment takes, and from which environments: what the verifier checks on every
/// signed payload and ingest checks on every anonymous notification before it stores it. Read once, by one rule, from
/// the shared settings (``AppRegistry``, which also holds each app's keys):
/// - `TOLLGATE_APPS` — a file listing the apps (``AppRegistry``); or, for one app, its shorthand:
/// - `TOLLGATE_BUNDLE_ID` — the app's bundle ID (required without `TOLLGATE_APPS`)
/// - `TOLLGATE_APP_APPLE_ID` — the app's Apple ID (required in production)
/// - `TOLLGATE_ENVIRONMENT` — `production` or `sandbox` [`sandbox`]
/// - `TOLLGATE_ACCEPT_SANDBOX` — production also takes sandbox data, for App Review [`false`]
///
/// ``bundleId`` and ``appAppleId`` are the first (default) app's; ``additionalApps`` the others, in the file's order.
package struct AppIdentity: Sendable, Hashable {
    /// One app's identity: what Apple signs into its data.
    package struct App: Sendable, Hashable {
        package var bundleId: String
        package var appAppleId: Int64?

        package init(bundleId: String, appAppleId: Int64? = nil) {
            self.bundleId = bundleId
            self.appAppleId = appAppleId
        }
    }

    package var bundleId: String
    package var appAppleId: Int64?
    package var environment: AppStoreEnvironment
    package var acceptsSandbox: Bool
    /// The deployment's other apps (`TOLLGATE_APPS` past its first); empty for one app.
    package var additionalApps: [App]

    package init(
        bundleId: String, appAppleId: Int64? = nil, environment: AppStoreEnvironment = .sandbox, acceptsSandbox: Bool = false,
        additionalApps: [App] = []
    ) {
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.acceptsSandbox = acceptsSandbox
        self.additionalApps = additionalApps
    }

    /// Reads the settings (``AppRegistry/init(reader:)``); a missing or invalid one throws, naming it.
    package init(reader: EnvironmentReader) throws(ConfigurationError) {
        self = try AppRegistry(reader: reader).identity
    }

    /// Every app, the default first.
    package var apps: [App] { [App(bundleId: bundleId, appAppleId: appAppleId)] + additionalApps }

    /// The configured app with this bundle ID, or nil.
    package func app(_ bundleId: String?) -> App? {
        guard let bundleId else { return nil }
        return apps.first { $0.bundleId == bundleId }
    }
}
