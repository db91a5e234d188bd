package import AppStore
package import Core
package import Logging
package import Pipeline
package import Redis
import ServiceKit

/// What an operator's call asks Apple with (``OrderLookup``, ``AccountTokenAssignment``, ``SubscriptionExtensions``,
/// ``TestNotificationCheck``): API clients, the JWS verifier, Redis, and a token of the fleet-wide bucket of the app
/// and endpoint class before every call (SECURITY.md, "Calls to Apple"), so that operators' calls share Apple's
/// per-app budget with every other call of the fleet instead of spending it beside them.
///
/// The verifier's jobs of kind `operator` run on the verifier's own long-lived clients, limiter and Redis client
/// (``JobVerifier``): a job makes no API client, transport (libcurl thread) or Redis connection of its own. `tollctl`
/// makes one set for the command (``withTool(_:clientName:logger:_:)``).
package struct OperatorAPI: Sendable {
    package let configuration: VerifierConfiguration
    package let signedData: SignedDataVerifier
    package let apiClients: AppleAPIClients
    /// The ledger: read by look-ups, written by an account-token assignment's hand-over.
    package let redis: any RedisCommandExecutor
    private let acquire: @Sendable (TokenBucket) async throws -> Void

    package init(
        configuration: VerifierConfiguration, signedData: SignedDataVerifier, apiClients: AppleAPIClients,
        redis: any RedisCommandExecutor, acquire: @escaping @Sendable (TokenBucket) async throws -> Void
    ) {
        self.configuration = configuration
        self.signedData = signedData
        self.apiClients = apiClients
        self.redis = redis
        self.acquire = acquire
    }

    /// `tollctl`'s: the verifier's clients built once for the command, a Redis connection (`clientName`), and the
    /// fleet-wide limiter on it, waiting up to 30 s for a token (`rate_limited` past it). Closes the connection after
    /// `body`.
    package static func withTool<T>(
        _ configuration: VerifierConfiguration, clientName: String, logger: Logger,
        _ body: (OperatorAPI) async throws -> T
    ) async throws -> T {
        let (signedData, _, apiClients) = try VerifierServices.appleClients(configuration, metrics: VerifierMetrics())
        let redis = try await configuration.shared.connectTool(clientName: clientName, logger: logger, commandTimeout: .seconds(10))
        defer { redis.close() }
        let limiter = FleetRateLimiter(redis: redis, maximumWait: .seconds(30))
        let api = OperatorAPI(
            configuration: configuration, signedData: signedData, apiClients: apiClients, redis: redis,
            acquire: { try await limiter.acquire($0) })
        return try await body(api)
    }

    /// The fleet-wide bucket of `endpoint` for app `bundleId` in `environment`, as the verifier's own calls take it.
    package func bucket(_ endpoint: AppStoreEndpointClass, bundleId: String, environment: AppStoreEnvironment) -> TokenBucket {
        endpoint.bucket(
            prefix: configuration.shared.keys.prefix, sandbox: environment == .sandbox, rateScale: configuration.apiRateScale,
            bundleId: bundleId)
    }

    /// One call with `entry`'s client, after a token of its app's fleet-wide bucket of `endpoint`.
    /// - Throws: ``RateLimitError`` when no token came in time; the call's errors.
    package func call<Value>(
        _ endpoint: AppStoreEndpointClass, _ entry: AppleAPIClients.Entry,
        _ body: (AppStoreServerAPIClient) async throws -> Value
    ) async throws -> Value {
        try await acquire(bucket(endpoint, bundleId: entry.bundleId, environment: entry.environment))
        return try await body(entry.client)
    }

    /// The first answer that is not a 404, asking `entries` in order (each call under its own token), with the entry
    /// that gave it; the last 404 when all are.
    package func firstFound<Value>(
        _ endpoint: AppStoreEndpointClass, _ entries: [AppleAPIClients.Entry],
        _ body: (AppStoreServerAPIClient) async throws -> Value
    ) async throws -> (AppleAPIClients.Entry, Value) {
        guard !entries.isEmpty else { throw VerificationError.apiNotConfigured }
        var notFound: (any Error)?
        for entry in entries {
            do {
                return (entry, try await call(endpoint, entry, body))
            } catch let error as AppStoreAPIError where error.httpStatus == 404 {
                notFound = error
            }
        }
        throw notFound ?? VerificationError.apiNotConfigured
    }

    /// Every client, production first, and within one environment the apps in configuration order (the default first):
    /// an operator's command names a transaction, not an app, so each app's client is asked in turn, and Apple
    /// answers 404 for another app's transaction.
    package var ordered: [AppleAPIClients.Entry] {
        apiClients.environments.flatMap { apiClients.clients(in: $0) }
    }

    /// ``ordered`` of the apps of `project` only (docs/PROJECTS.md): an operator's call of one project never asks
    /// Apple with another project's key, so another project's purchases are not found.
    package func ordered(of project: ProjectID) -> [AppleAPIClients.Entry] {
        ordered.filter { configuration.project(ofApp: $0.bundleId) == project }
    }

    /// The default app's entry for `environment` (a mass extension names a product, and so one app: with several
    /// apps, the default app's products).
    func defaultApp(_ environment: AppStoreEnvironment) throws -> AppleAPIClients.Entry {
        guard !apiClients.isEmpty else { throw VerificationError.apiNotConfigured }
        guard let entry = apiClients.entries.first(where: { $0.bundleId == configuration.bundleId && $0.environment == environment })
        else {
            throw VerificationError("environment_not_accepted", "this deployment does not use Apple's \(environment.rawValue) environment")
        }
        return entry
    }
}
