package import AppStore
package import Core
package import Foundation
package import HTTPClient
package import Pipeline
package import ServiceKit

/// The verifier's settings, read from the environment by ``init(environment:)`` and validated at startup.
///
/// Keys (defaults in brackets), besides ``SharedConfiguration``'s `TOLLGATE_REDIS_URL`,
/// `TOLLGATE_KEY_PREFIX`, `LOG_LEVEL` and `TOLLGATE_SHUTDOWN_GRACE`:
/// - `TOLLGATE_APPS` — a file listing the deployment's apps, each with its own API key and shared secret
///   (``AppStore/AppRegistry``); without it, the one-app shorthand:
/// - `TOLLGATE_BUNDLE_ID` — the app's bundle ID (required)
/// - `TOLLGATE_APP_APPLE_ID` — the app's Apple ID (required when the environment is production)
/// - `TOLLGATE_ENVIRONMENT` — `production` or `sandbox` [`sandbox`]
/// - `TOLLGATE_ACCEPT_SANDBOX` — production also accepts sandbox data, for App Review [`false`]
/// - `TOLLGATE_SHARED_SECRET` — `verifyReceipt` password and V1 notification password [none: V1
///   notifications are rejected with `shared_secret_mismatch`]
/// - `TOLLGATE_ROOT_CERTS` — comma-separated DER or PEM files of trusted roots [Apple Root CA - G3]
/// - `TOLLGATE_VERIFY_RECEIPT_URL`, `TOLLGATE_VERIFY_RECEIPT_SANDBOX_URL` [Apple's]
/// - `TOLLGATE_APPSTORE_API_URL`, `TOLLGATE_APPSTORE_API_SANDBOX_URL` [Apple's]
/// - `TOLLGATE_API_KEY_ID`, `TOLLGATE_API_ISSUER_ID`, `TOLLGATE_API_PRIVATE_KEY_PATH` — App Store Server
///   API key; all three or none (without: no Get Transaction Info, no Send Consumption Information)
/// - `TOLLGATE_RECEIPT_VALIDATION` — `verify-receipt`, `server-api` (needs the API key) or `auto` (the Server API
///   for app receipts it can prove, when a key is set; `verifyReceipt` otherwise) [`auto`]
/// - `TOLLGATE_RECEIPT_ROOT_CERTS` — DER or PEM files of the roots app receipts' signatures chain to [Apple Inc.
///   Root and the `TOLLGATE_ROOT_CERTS` roots]
/// - `TOLLGATE_RECEIPT_INTERMEDIATE_CERTS` — DER or PEM files of the intermediates app receipts' signing certificates
///   may be issued by; a receipt's chain runs through one of these or not at all, whatever else it carries [Apple's
///   WWDR intermediates under Apple Inc. Root; the simulator's `intermediate.der` for its receipts]
/// - `TOLLGATE_RECEIPT_MAX_HISTORY_PAGES` — the most pages of Get Transaction History one receipt may read; past them
///   the receipt is rejected `receipt_history_too_long` [`100`: 2,000 transactions, a weekly subscription for 38 years]
/// - `TOLLGATE_USER_APPLE_CALLS` — calls to Apple (`verifyReceipt`, each page of the Server API) one user's
///   submissions may cause per hour, fleet-wide; past them the job waits, retryable `user_apple_budget_spent`
///   [`600`; 0: no limit]
/// - `TOLLGATE_RECEIPT_MEMORY` — how long a user's validated receipt is remembered, so that posting it again (with
///   another `orderNo`) asks Apple nothing; the ledger still decides what it pays [`15m`; `0s`: never]
/// - `TOLLGATE_CONFIRM_WITH_API` — confirm StoreKit 2 transactions with Get Transaction Info [`false`]
/// - `TOLLGATE_EVENTS_INCLUDE_APPLE` — verified events keep Apple's signed JWS (the notification's `signedPayload`,
///   the StoreKit 2 transaction), which the outbound events then carry as `apple` (~5–19 KB each) [`false`]
/// - `TOLLGATE_REFUND_PREFERENCE` — refund preference sent with consumption information: `0` undeclared,
///   `1` grant (v2 `GRANT_FULL`), `2` decline (v2 `DECLINE`), `3` no preference (v2: none sent) [`0`]
/// - `TOLLGATE_CONSUMPTION_API` — `v2` (Send Consumption Information) or `v1` (the deprecated V1 body) [`v2`]
/// - `TOLLGATE_SAMPLE_CONTENT_PROVIDED` — the app offers a sample, trial or description before purchase [`false`]
/// - `TOLLGATE_API_RATE_SCALE_PERCENT` — percent of Apple's published API rates the fleet-wide buckets allow [`100`]
/// - `TOLLGATE_METRICS_PORT` — `/metrics` and `/healthz` [`9090`]; `TOLLGATE_METRICS_HOST` [`0.0.0.0`]
/// - `TOLLGATE_VERIFIER_CONCURRENCY` — jobs in flight per replica [`64`]
/// - `TOLLGATE_RETRY_BASE_MS`, `TOLLGATE_RETRY_CAP_MS`, `TOLLGATE_RETRY_MAX_ATTEMPTS` [`2000`, `900000`, `10`]
/// - `TOLLGATE_APPLE_TIMEOUT_MS` — time allowed for each call to Apple [`10000`]
/// - `TOLLGATE_HTTP_TRANSPORT` — how Apple (and OCSP responders) are called: `curl` (libcurl's multi interface)
///   or `urlsession` (Foundation's `URLSession`, the fallback) [`curl`]
/// - `TOLLGATE_CLAIM_MIN_IDLE_MS` — entries idle longer are taken over from crashed replicas [`60000`];
///   must exceed the Apple timeout
/// - `TOLLGATE_CLAIM_INTERVAL_MS` — how often idle entries are looked for [`5000`]
/// - `TOLLGATE_HEARTBEAT_MS` — how often a job in flight resets its idle time [claim min-idle / 4]
/// - the reconciler's `TOLLGATE_RECONCILE_*` and `TOLLGATE_SWEEP_*` keys, listed on ``ReconcilerConfiguration``
package struct VerifierConfiguration: Sendable {
    package var shared: SharedConfiguration
    /// The default (first) app's bundle ID; with ``appAppleId``, ``sharedSecret`` and ``apiKey``, the default app.
    package var bundleId: String
    package var appAppleId: Int64?
    package var environment: AppStoreEnvironment
    package var acceptSandbox: Bool
    package var sharedSecret: String?
    package var rootCertificates: [Data]
    package var verifyReceiptURL: URL
    package var verifyReceiptSandboxURL: URL
    package var apiURL: URL
    package var apiSandboxURL: URL
    package var apiKey: APIKey?
    package var confirmWithAPI: Bool
    /// `TOLLGATE_EVENTS_INCLUDE_APPLE`: verified events keep Apple's signed JWS for the outbound events.
    package var includeAppleJWS = false
    package var receiptValidation: ReceiptValidationMode
    /// The roots of receipts' PKCS#7 signatures; `nil`: Apple Inc. Root and ``rootCertificates``.
    package var receiptRootCertificates: [Data]?
    /// The intermediates receipts' signing certificates may be issued by (Apple's WWDR by default).
    package var receiptIntermediates: [Data]
    package var receiptMaxHistoryPages: Int
    /// Calls to Apple one user's jobs may cause per hour (0: no limit).
    package var userAppleCallsPerHour: Int
    /// How long a user's validated receipt is remembered (zero: not at all).
    package var receiptMemory: Duration
    /// Online checks (`TOLLGATE_ONLINE_CHECKS`): certificates valid now (not at the payload's `signedDate`), and
    /// each proven chain's leaf and intermediate asked of their OCSP responders once per `onlineChainLifetime`
    /// (a verified "revoked" rejects; no good answer is retryable, so an OCSP outage delays, never rejects).
    package var onlineChecks: Bool
    package var onlineChainLifetime: Duration
    package var refundPreference: Int
    /// `2`: Send Consumption Information (v2); `1`: the V1 body (`TOLLGATE_CONSUMPTION_API=v1`).
    package var consumptionAPIVersion: Int
    package var sampleContentProvided: Bool
    package var apiRateScale: Double
    package var metricsHost: String
    package var metricsPort: Int
    package var concurrency: Int
    package var retry: RetryPolicy
    package var appleTimeout: Duration
    package var httpTransport: HTTPTransportKind
    package var claimMinIdle: Duration
    package var claimInterval: Duration
    package var heartbeatInterval: Duration
    /// Gap repair: the notification reconciler and the subscription sweeper.
    package var reconcile: ReconcilerConfiguration
    /// The deployment's other apps (`TOLLGATE_APPS` past its first), each with its own key and shared secret.
    package var additionalApps: [ConfiguredApp] = []

    /// The projects (docs/PROJECTS.md), each naming its apps; nil: one project, `default`, of every app.
    package var projects: [ConfiguredProject]?

    /// The project of the app `bundleId` as Apple signed it: the one listing it, or the default project when the
    /// deployment has no projects; nil when no project lists it (or Apple named no app while projects are configured).
    package func project(ofApp bundleId: String?) -> ProjectID? {
        guard let projects else { return .default }
        guard let bundleId else { return nil }
        return projects.first { $0.bundleIds.contains(bundleId) }?.id
    }

    /// An App Store Server API key (`.p8` contents).
    package typealias APIKey = AppStoreKey

    /// Every app, the default first (its settings are ``bundleId``, ``appAppleId``, ``apiKey``, ``sharedSecret``).
    package var apps: [ConfiguredApp] {
        [ConfiguredApp(bundleId: bundleId, appAppleId: appAppleId, apiKey: apiKey, sharedSecret: sharedSecret)] + additionalApps
    }

    /// The configured app with this bundle ID, or nil: the app Apple signed into the data decides, never the client.
    package func app(_ bundleId: String?) -> ConfiguredApp? {
        guard let bundleId else { return nil }
        return apps.first { $0.bundleId == bundleId }
    }

    /// Whether any app has an App Store Server API key.
    package var hasAPIKey: Bool { apps.contains { $0.apiKey != nil } }

    /// Whether any app has a shared secret.
    package var hasSharedSecret: Bool { apps.contains { $0.sharedSecret != nil } }

    /// Settings with defaults for everything but the app's identity (for tests and embedding).
    package init(
        shared: SharedConfiguration = SharedConfiguration(), bundleId: String, appAppleId: Int64? = nil,
        environment: AppStoreEnvironment = .sandbox
    ) {
        self.shared = shared
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        acceptSandbox = false
        sharedSecret = nil
        rootCertificates = [AppleRootCertificates.appleRootCAG3]
        verifyReceiptURL = ReceiptClientConfiguration.appleProductionURL
        verifyReceiptSandboxURL = ReceiptClientConfiguration.appleSandboxURL
        apiURL = AppStoreServerAPIConfiguration.appleProductionURL
        apiSandboxURL = AppStoreServerAPIConfiguration.appleSandboxURL
        apiKey = nil
        confirmWithAPI = false
        receiptValidation = .auto
        receiptRootCertificates = nil
        receiptIntermediates = AppleRootCertificates.receiptIntermediates
        receiptMaxHistoryPages = 100
        userAppleCallsPerHour = 600
        receiptMemory = .seconds(900)
        onlineChecks = false
        onlineChainLifetime = .seconds(900)
        refundPreference = 0
        consumptionAPIVersion = 2
        sampleContentProvided = false
        apiRateScale = 1
        metricsHost = "0.0.0.0"
        metricsPort = 9090
        concurrency = 64
        retry = RetryPolicy(base: .seconds(2), cap: .seconds(900), maxAttempts: 10)
        appleTimeout = .seconds(10)
        httpTransport = .curl
        claimMinIdle = .seconds(60)
        claimInterval = .seconds(5)
        heartbeatInterval = .seconds(15)
        reconcile = ReconcilerConfiguration()
    }

    /// Whether data from `dataEnvironment` is accepted by this deployment.
    package func accepts(_ dataEnvironment: AppStoreEnvironment) -> Bool {
        dataEnvironment == environment || (environment == .production && acceptSandbox && dataEnvironment == .sandbox)
    }

    /// The roots app receipts' signatures must chain to.
    package var receiptRoots: [Data] { receiptRootCertificates ?? [AppleRootCertificates.appleIncRoot] + rootCertificates }

    /// A rejection when this deployment does not take data from `dataEnvironment`.
    package func failure(forDataFrom dataEnvironment: AppStoreEnvironment) -> VerificationFailure? {
        guard !accepts(dataEnvironment) else { return nil }
        if dataEnvironment == .sandbox && environment == .production {
            return VerificationFailure(.sandboxNotAllowed, "sandbox data is not accepted (TOLLGATE_ACCEPT_SANDBOX is off)")
        }
        return VerificationFailure(.wrongEnvironment, "\(dataEnvironment) data is not accepted by a \(environment) deployment")
    }

    /// Whether sandbox data can reach this deployment.
    package var allowsSandbox: Bool { environment == .sandbox || acceptSandbox }
}
