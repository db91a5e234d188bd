import AppStore
import Core
import Logging
import Pipeline
import Prometheus
import Redis
import ServiceKit
import ServiceLifecycle
import Verification

extension App {
    /// The Redis Function libraries the verifier loads at its start, and so the ones `/readyz` checks.
    static let functionLibraries = [VerifierFunctions.library, RateLimitFunctions.library, ReconcileFunctions.library]

    /// The consumer group every verifier replica joins.
    static let consumerGroup = "verifiers"

    /// Builds the verifier: the Redis client (a pool, or a cluster client; with the pipeline, verifier, rate-limit and reconcile functions
    /// loaded), the Apple clients, the consumer of every partition's jobs stream, their retry promoter and janitor, the ``Verification/Reconciler`` (when
    /// enabled and an API key is configured) and the operators' listener (`/healthz`, `/readyz`, `/metrics`:
    /// `OperatorEndpoints`), as one `ServiceGroup` shut down gracefully on SIGTERM and SIGINT (`handlesSignals`).
    /// Tests call this directly (metrics port 0, their own consumer name, no signal handling).
    static func build(
        configuration: VerifierConfiguration,
        logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        consumer: String = ConsumerName.unique(),
        handlesSignals: Bool = true,
        onMetricsServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> ServiceGroup {
        let keys = configuration.shared.keys
        let handles = MetricHandles(factory: PrometheusMetricsFactory(registry: registry))
        let metrics = VerifierMetrics(handles: handles)
        let (signedData, receipts, apiClients) = try VerifierServices.appleClients(configuration, metrics: metrics)

        let (redis, operatorsRedis) = try await configuration.shared.connectWorker(
            clientName: "verifier", libraries: functionLibraries, logger: logger)
        let clock = PipelineClock.system
        let verifier = JobVerifier(
            configuration: configuration, signedData: signedData, receipts: receipts, apiClients: apiClients,
            limiter: FleetRateLimiter(redis: redis), redis: redis, clock: clock, logger: logger)
        let handler = JobHandler(
            verifier: verifier, redis: redis, keys: keys, group: consumerGroup, consumer: consumer,
            heartbeatInterval: configuration.heartbeatInterval, clock: clock,
            metrics: metrics, logger: logger)
        // Every partition's jobs stream; each job's outcome is written in its own partition (JobHandler).
        let jobStreams = keys.partitionStreams("jobs")
        let work = StreamConsumer.withUpkeep(
            configuration: StreamConsumerConfiguration(
                streams: jobStreams, group: consumerGroup, consumer: consumer, concurrency: configuration.concurrency,
                readCount: min(configuration.concurrency, 64), claimMinIdle: configuration.claimMinIdle,
                claimInterval: configuration.claimInterval, retry: configuration.retry),
            redis: redis, promoteEvery: .milliseconds(200), clock: clock, metrics: handles, logger: logger,
            deadLetterWrites: { handler.deadLetterWrites($0, $1) },
            handler: { try await handler.handle($0) })
        let endpoints = OperatorEndpoints(
            redis: operatorsRedis, libraries: functionLibraries,
            metrics: {
                metrics.chainCache(signedData.chainCache.statistics)
                return registry.emitToBuffer()
            })
        var services: [any Service] = [redis, operatorsRedis] + work
        services.append(
            endpoints.application(
                host: configuration.metricsHost, port: configuration.metricsPort, serverName: "verifier",
                onServerRunning: onMetricsServerRunning, logger: logger))
        if configuration.reconcile.enabled, !apiClients.isEmpty || configuration.hasSharedSecret {
            services.append(
                Reconciler(
                    context: ReconcileContext(
                        configuration: configuration, signedData: signedData, receipts: receipts, apiClients: apiClients,
                        redis: redis, clock: .system, dryRun: false, metrics: metrics, logger: logger)))
        } else if configuration.reconcile.enabled {
            logger.notice(
                "Reconciler off: it needs an App Store Server API key (TOLLGATE_API_KEY_ID …) or, for receipts, TOLLGATE_SHARED_SECRET")
        }
        return configuration.shared.serviceGroup(
            services: services, handlesSignals: handlesSignals, metrics: handles.factory, logger: logger)
    }
}
