import AppStore
import Core
import Foundation
import Hummingbird
import Ledger
import Logging
import NIOCore
import Pipeline
import Prometheus
import Redis
import ServiceKit
import ServiceLifecycle

extension App {
    /// The Redis Function libraries ingest loads at its start, and so the ones `/readyz` checks. Grants and
    /// revocations (`POST`/`DELETE /v1/users/{userId}/grants`) and coin spends (`POST /v1/users/{userId}/coins/spend`)
    /// are ledger calls; customer reads are the customer library's.
    static let functionLibraries = [
        IngestFunctions.library, RateLimitFunctions.library, OfferFunctions.library, CustomerInfo.library, LedgerFunctions.library,
    ]

    /// Builds ingest: connects to Redis (failing fast, naming `TOLLGATE_REDIS_URL`), loads the pipeline and
    /// ingest function libraries, and wires the pool, the job-results listener, the backlog sampler and the HTTP
    /// routes into one application, on `router` (a new one unless given: a test passes its own to list what is
    /// registered), its metrics on `registry`. Tests call this directly with port 0 and read the port in `onServerRunning`;
    /// `main` runs it in the process's group (``serviceGroup(configuration:logger:registry:)``).
    ///
    /// The operators' endpoints (`/healthz`, `/readyz`, `/metrics`: `OperatorEndpoints`) are served next to the API,
    /// or with `TOLLGATE_OPS_PORT` set by a second listener of their own. `/readyz` always uses a Redis connection of
    /// its own, so that it never queues behind the enqueue round trips.
    ///
    /// Shutdown order (reverse of start): the HTTP server stops accepting and finishes the requests it has,
    /// then the operators' listener, the backlog sampler and the listener stop, and the Redis pools close last.
    static func build(
        configuration: IngestConfiguration,
        logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        clock: PipelineClock = .system,
        onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in },
        onOperatorsServerRunning: @escaping @Sendable (Int) async -> Void = { _ in },
        router: Router<BasicRequestContext> = Router(context: BasicRequestContext.self)
    ) async throws -> some ApplicationProtocol {
        let pool = try await configuration.shared.connectRedis(
            poolSize: configuration.redisPoolSize, clientName: "ingest", logger: logger)
        do {
            for library in functionLibraries { try await library.load(on: pool) }
        } catch {
            pool.close()
            throw PipelineError.functionLoadFailed("\(functionLibraries.map(\.name).joined(separator: ", ")): \(error)")
        }
        if configuration.clientJWTSecret == nil, configuration.projects.isEmpty {
            logger.warning("TOLLGATE_CLIENT_JWT_SECRET is not set: user endpoints answer 401")
        }
        for key in configuration.serviceKeys where key.isBare {
            logger.warning(
                "a service key has no name or scopes: it may do everything; give it name:scope+scope:key",
                metadata: ["key": "\(key.name)"])
        }
        let keys = configuration.shared.keys
        let metrics = IngestMetrics(registry: registry)
        let waiters = ResultWaiters(maxWaiters: configuration.maxWaiters, maxPerUser: configuration.userMaxWaiters)
        let operatorsRedis: any RedisClient
        do {
            operatorsRedis = try await configuration.shared.connectOperatorsPool(clientName: "ingest-ops", logger: logger, like: pool)
        } catch {
            pool.close()
            throw error
        }
        var subscriberConfiguration = configuration.shared.redis
        subscriberConfiguration.clientName = "ingest"
        let listener = ResultListener(
            subscriber: RedisSubscriber(configuration: subscriberConfiguration, channels: [keys.jobResultsChannel], logger: logger),
            waiters: waiters, logger: logger)
        let backlog = BacklogMonitor(
            redis: pool, keys: keys, interval: configuration.backlogSampleInterval,
            metrics: metrics, logger: logger)
        await backlog.sample()
        let signatures: SignedDataVerifier
        do {
            signatures = try SignedDataVerifier(
                configuration: SignedDataVerifierConfiguration(
                    rootCertificates: configuration.rootCertificates, bundleId: configuration.app.bundleId,
                    environment: configuration.app.environment, appAppleId: configuration.app.appAppleId,
                    allowsMissingAppAppleId: true, acceptsSandbox: configuration.app.acceptsSandbox,
                    additionalApps: configuration.app.additionalApps))
        } catch {
            pool.close()
            operatorsRedis.close()
            throw ConfigurationError(variable: "TOLLGATE_ROOT_CERTS", problem: "is not usable: \(error.message)")
        }
        let routes = IngestRoutes(
            configuration: configuration, redis: pool,
            authenticator: await Authenticator(
                clientJWTSecret: configuration.clientJWTSecret,
                projectSecrets: configuration.projects.map { ($0.id, $0.clientJWTSecret) }, serviceKeys: configuration.serviceKeys,
                rules: .init(
                    issuer: configuration.clientJWTIssuer, audience: configuration.clientJWTAudience,
                    maxLifetime: configuration.clientJWTMaxLifetime),
                refusals: RefusalLog(logger: logger, clock: clock)),
            signatures: signatures,
            doorBudget: ChainCheckBudget(
                ratePerSecond: configuration.doorChainChecksPerSecond, capacity: Double(configuration.doorChainCheckBurst)),
            batcher: EnqueueBatcher(
                redis: pool, maxBatch: configuration.enqueueBatchSize, maxBatchBytes: configuration.enqueueBatchBytes,
                maxInFlight: configuration.enqueueRoundTrips,
                queueLimit: configuration.enqueueQueueLimit,
                waitReplicas: configuration.waitReplicas, waitTimeoutMilliseconds: configuration.waitTimeoutMilliseconds,
                metrics: metrics, logger: logger),
            waiters: waiters, backlog: backlog, metrics: metrics, clock: clock, logger: logger)
        routes.register(on: router)
        var services: [any Service] = [pool, operatorsRedis, listener, backlog]
        services += RedisClusterMetrics.exporters(for: services, factory: metrics.factory)
        let endpoints = OperatorEndpoints(
            redis: operatorsRedis,
            libraries: functionLibraries, metrics: { metrics.render() })
        // The operators' endpoints (Redis' state, the metrics) are never on the public listener unless asked for.
        if let opsPort = configuration.opsPort {
            services.append(
                endpoints.application(
                    host: configuration.opsHost, port: opsPort, serverName: "tollgate-ingest-ops",
                    idleTimeout: configuration.idleTimeout, onServerRunning: onOperatorsServerRunning, logger: logger))
        } else if configuration.opsOnPublicListener {
            endpoints.register(on: router)
        } else {
            logger.warning(
                "The operators' endpoints (/healthz, /readyz, /metrics) are served nowhere: set TOLLGATE_OPS_PORT",
                metadata: ["setting": "TOLLGATE_OPS_PORT"])
        }
        logger.info(
            "ingest ready",
            metadata: [
                "http.host": "\(configuration.host)", "http.port": "\(configuration.port)",
                "catalog.products": "\(configuration.catalog.products.count)", "redis": "\(configuration.shared.redis)",
            ])
        return Application(
            router: router,
            server: .http1(configuration: .init(idleTimeout: .nanoseconds(configuration.idleTimeout.nanoseconds))),
            configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "tollgate-ingest"),
            services: services,
            onServerRunning: onServerRunning,
            logger: logger
        )
    }
}
