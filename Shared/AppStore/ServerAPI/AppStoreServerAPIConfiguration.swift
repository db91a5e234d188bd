package import Foundation

/// Settings of the ``AppStoreServerAPIClient``. Services read them from `TOLLGATE_API_ISSUER_ID`,
/// `TOLLGATE_API_KEY_ID`, `TOLLGATE_API_PRIVATE_KEY_PATH`, `TOLLGATE_BUNDLE_ID`, `TOLLGATE_ENVIRONMENT`,
/// `TOLLGATE_APPSTORE_API_URL` and `TOLLGATE_APPSTORE_API_SANDBOX_URL`.
package struct AppStoreServerAPIConfiguration: Sendable {
    /// Apple's production base URL (recommended since May 2026; the older `https://api.storekit.itunes.apple.com`
    /// still answers and can be configured).
    package static let appleProductionURL = URL(string: "https://api.storekit.apple.com")!
    /// Apple's sandbox base URL (the older `https://api.storekit-sandbox.itunes.apple.com` still answers).
    package static let appleSandboxURL = URL(string: "https://api.storekit-sandbox.apple.com")!

    /// The issuer ID of the API key (App Store Connect, Users and Access, Integrations).
    package var issuerId: String
    /// The key ID of the API key.
    package var keyId: String
    /// The key's `.p8` file contents (PEM, `-----BEGIN PRIVATE KEY-----`).
    package var privateKeyPEM: String
    package var bundleId: String
    /// Which base URL is called: ``productionURL`` for `.production`, ``sandboxURL`` for `.sandbox`.
    package var environment: AppStoreEnvironment
    package var productionURL: URL
    package var sandboxURL: URL
    /// Time allowed for each HTTP call.
    package var timeout: Duration
    /// The lifetime of each JWT (Apple allows at most 60 minutes).
    package var tokenLifetime: Duration
    /// A token is replaced this long before it expires.
    package var tokenRefreshMargin: Duration
    /// A guard against endless paging: the most pages one call follows.
    package var maximumPages: Int

    package init(
        issuerId: String,
        keyId: String,
        privateKeyPEM: String,
        bundleId: String,
        environment: AppStoreEnvironment,
        productionURL: URL = AppStoreServerAPIConfiguration.appleProductionURL,
        sandboxURL: URL = AppStoreServerAPIConfiguration.appleSandboxURL,
        timeout: Duration = .seconds(15),
        tokenLifetime: Duration = .seconds(20 * 60),
        tokenRefreshMargin: Duration = .seconds(60),
        maximumPages: Int = 1000
    ) {
        self.issuerId = issuerId
        self.keyId = keyId
        self.privateKeyPEM = privateKeyPEM
        self.bundleId = bundleId
        self.environment = environment
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.timeout = timeout
        self.tokenLifetime = tokenLifetime
        self.tokenRefreshMargin = tokenRefreshMargin
        self.maximumPages = maximumPages
    }

    /// The base URL for ``environment``.
    package var baseURL: URL {
        environment == .production ? productionURL : sandboxURL
    }
}
