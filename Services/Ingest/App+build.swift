import Foundation
import Hummingbird
import Ledger
import Logging
import NIOCore
import Pipeline
import Redis

/// Builds ingest: connects to Redis (failing fast, naming `TOLLGATE_REDIS_URL`), loads the pipeline and
/// ingest function libraries, and wires the pool, the job-results listener, the backlog sampler and the HTTP
/// routes into one application. Tests call this directly with port 0 and read the port in `onServerRunning`.
///
/// Shutdown order (reverse of start): the HTTP server stops accepting and finishes the requests it has,
/// then the backlog sampler and the listener stop, and the Redis pool closes last.
func buildApplication(
    configuration: IngestConfiguration,
    logger: Logger,
    clock: PipelineClock = .system,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) async throws -> some ApplicationProtocol {
    let pool = try await configuration.shared.connectRedis(
        poolSize: configuration.redisPoolSize, clientName: "ingest", logger: logger)
    do {
        try await IngestFunctions.load(on: pool)
    } catch {
        pool.close()
        throw PipelineError.functionLoadFailed("\(IngestFunctions.libraryName): \(error)")
    }
    if configuration.clientJWTSecret == nil {
        logger.warning("TOLLGATE_CLIENT_JWT_SECRET is not set: user endpoints answer 401")
    }
    let keys = configuration.shared.keys
    let metrics = IngestMetrics()
    let waiters = ResultWaiters()
    var subscriberConfiguration = configuration.shared.redis
    subscriberConfiguration.clientName = "ingest"
    let listener = ResultListener(
        subscriber: RedisSubscriber(configuration: subscriberConfiguration, channels: [keys.jobResultsChannel], logger: logger),
        waiters: waiters, logger: logger)
    let backlog = BacklogMonitor(redis: pool, stream: keys.jobs().stream, interval: configuration.backlogSampleInterval,
                                 metrics: metrics, logger: logger)
    await backlog.sample()
    let routes = IngestRoutes(
        configuration: configuration, redis: pool,
        authenticator: await Authenticator(clientJWTSecret: configuration.clientJWTSecret, serviceKeys: configuration.serviceKeys),
        batcher: EnqueueBatcher(
            redis: pool, maxBatch: configuration.enqueueBatchSize, maxBatchBytes: configuration.enqueueBatchBytes,
            maxInFlight: configuration.enqueueRoundTrips,
            queueLimit: configuration.enqueueQueueLimit,
            waitReplicas: configuration.waitReplicas, waitTimeoutMilliseconds: configuration.waitTimeoutMilliseconds,
            metrics: metrics, logger: logger),
        waiters: waiters, backlog: backlog, metrics: metrics, clock: clock, logger: logger)
    let router = Router(context: BasicRequestContext.self)
    routes.register(on: router)
    logger.info("ingest ready", metadata: [
        "http.host": "\(configuration.host)", "http.port": "\(configuration.port)",
        "catalog.products": "\(configuration.catalog.products.count)", "redis": "\(configuration.shared.redis)",
    ])
    return Application(
        router: router,
        configuration: .init(address: .hostname(configuration.host, port: configuration.port), serverName: "tollgate-ingest"),
        services: [pool, listener, backlog],
        onServerRunning: onServerRunning,
        logger: logger
    )
}
