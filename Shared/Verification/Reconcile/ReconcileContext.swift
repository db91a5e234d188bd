package import AppStore
import Core
import Foundation
package import Logging
package import Pipeline
package import Redis
import ServiceKit

/// Everything a reconcile pass uses: the verifier's settings and Apple clients, Redis, the clock, and
/// whether it is a dry run. A dry run sends Redis only reads (no lease, no function load, no rate-limit
/// bucket: it paces its Apple calls in-process at the bucket's rate) and changes nothing.
package struct ReconcileContext: Sendable {
    let configuration: VerifierConfiguration
    let signedData: SignedDataVerifier
    /// Receipts by the deployment's route, paced like every other call of the pass.
    var receipts: ReceiptRouter {
        ReceiptRouter(
            configuration: configuration, checkers: receiptCheckers, apiClients: apiClients, signedData: signedData,
            acquire: { [self] bucket in try await self.acquire(bucket) })
    }
    private let receiptCheckers: ReceiptCheckers
    let apiClients: AppleAPIClients
    let redis: any RedisCommandExecutor
    let clock: PipelineClock
    let dryRun: Bool
    let metrics: VerifierMetrics
    let logger: Logger
    private let limiter: FleetRateLimiter
    private let localPace: LocalPace

    package init(
        configuration: VerifierConfiguration, signedData: SignedDataVerifier, receipts: ReceiptCheckers,
        apiClients: AppleAPIClients, redis: any RedisCommandExecutor, clock: PipelineClock,
        dryRun: Bool, metrics: VerifierMetrics, logger: Logger
    ) {
        self.configuration = configuration
        self.signedData = signedData
        receiptCheckers = receipts
        self.apiClients = apiClients
        self.redis = redis
        self.clock = clock
        self.dryRun = dryRun
        self.metrics = metrics
        self.logger = logger
        limiter = FleetRateLimiter(redis: redis, maximumWait: .seconds(30))
        localPace = LocalPace()
    }

    var keys: Keys { configuration.shared.keys }

    /// The environments whose history and subscriptions this deployment reads (those with an API client).
    var environments: [AppStoreEnvironment] { apiClients.environments }

    /// The apps with an API client in `environment`, in configuration order.
    func apps(in environment: AppStoreEnvironment) -> [String] { apiClients.clients(in: environment).map(\.bundleId) }

    /// One App Store Server API call about the app `bundleId`, with its client, under its fleet-wide bucket of
    /// `endpoint` (a dry run paces itself).
    /// - Throws: ``VerificationError`` `api_not_configured`; Apple's ``AppStoreAPIError`` (callers decide per
    ///   item); `apple_unavailable` when no rate-limit token came.
    func callAPI<Value: Sendable>(
        _ endpoint: AppStoreEndpointClass, bundleId: String, environment: AppStoreEnvironment,
        _ body: (AppStoreServerAPIClient) async throws -> Value
    ) async throws -> Value {
        guard let client = apiClients.client(bundleId, environment) else {
            throw VerificationError("api_not_configured", "no App Store Server API key is configured for \(bundleId) in \(environment)")
        }
        let bucket = endpoint.bucket(
            prefix: keys.prefix, sandbox: environment == .sandbox, rateScale: configuration.apiRateScale, bundleId: bundleId)
        do {
            try await acquire(bucket)
        } catch let error as RateLimitError {
            throw VerificationError("apple_unavailable", error.description)
        }
        return try await body(client)
    }

    /// A token of `bucket` (a dry run paces itself in-process instead).
    func acquire(_ bucket: TokenBucket) async throws {
        if dryRun {
            try await localPace.wait(ratePerSecond: bucket.ratePerSecond)
        } else {
            try await limiter.acquire(bucket)
        }
    }

    /// `HGETALL` as a dictionary.
    func hash(_ key: String) async throws -> [String: String] {
        try await redis.hgetall(key)
    }
}

/// Spaces one process's calls at a bucket's rate without touching Redis (dry runs).
actor LocalPace {
    private var next = ContinuousClock.now

    func wait(ratePerSecond: Double) async throws {
        let now = ContinuousClock.now
        let start = max(now, next)
        next = start + .milliseconds(Int64((1000 / max(0.001, ratePerSecond)).rounded(.up)))
        if start > now { try await Task.sleep(until: start) }
    }
}
