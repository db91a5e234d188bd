import Core
import Foundation
import Hummingbird
import Ledger
import Logging
import Pipeline
import Prometheus
import Redis
import ServiceKit
import ServiceLifecycle

extension App {
    /// The Redis Function libraries the fulfiller loads at its start, and so the ones `/readyz` checks.
    static let functionLibraries = [LedgerFunctions.library]

    /// The consumer group every fulfiller replica joins on the verified stream.
    static let consumerGroup = "fulfillers"

    /// Builds the fulfiller: the Redis client (a pool or a cluster client; pipeline and ledger functions loaded),
    /// the consumer of every partition's verified stream, their retry promoter and janitor, the grants' sweeper
    /// (``GrantSweeper``), and the operators' listener (`/healthz`, `/readyz`, `/metrics`:
    /// `OperatorEndpoints`), as one
    /// `ServiceGroup` shut down gracefully on SIGTERM and SIGINT (`handlesSignals`). Tests call this directly
    /// (metrics port 0, their own consumer name and clock, no signal handling).
    static func build(
        configuration: FulfillerConfiguration,
        logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        consumer: String = ConsumerName.unique(),
        handlesSignals: Bool = true,
        clock: PipelineClock = .system,
        onMetricsServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> ServiceGroup {
        let keys = configuration.shared.keys
        let metrics = MetricHandles(factory: PrometheusMetricsFactory(registry: registry))
        let (redis, operatorsRedis) = try await configuration.shared.connectWorker(
            clientName: "fulfiller", libraries: functionLibraries, logger: logger)
        // The events streams' cap must fit in each primary's maxmemory (TOLLGATE_EVENTS_MAX_MB × its partitions).
        do {
            try await configuration.shared.checkEventsCap(maxBytes: configuration.eventsBounds.maxBytes, redis: redis, logger: logger)
        } catch {
            redis.close()
            operatorsRedis.close()
            throw error
        }
        var applier = LedgerApplier(
            redis: redis, catalog: configuration.catalog, keys: keys, group: consumerGroup,
            clampRefunds: configuration.clampRefunds, now: clock.nowMilliseconds)
        applier.durability = LedgerApplier.Durability(
            replicas: configuration.waitReplicas, timeoutMilliseconds: configuration.waitTimeoutMilliseconds)
        applier.repeatFreeTrial = configuration.repeatFreeTrial
        applier.userEventLog = configuration.userEventLog
        applier.projectCatalogs = configuration.projectCatalogs
        let handler = FulfillerHandler(applier: applier, keys: keys, metrics: FulfillerMetrics(handles: metrics), logger: logger)
        // Every partition's verified stream.
        let verifiedStreams = keys.partitionStreams("verified")
        let work = StreamConsumer.withUpkeep(
            configuration: StreamConsumerConfiguration(
                streams: verifiedStreams, group: consumerGroup, consumer: consumer,
                concurrency: configuration.concurrency, readCount: min(max(configuration.concurrency * 2, 16), 256),
                claimMinIdle: configuration.claimMinIdle, claimInterval: configuration.claimInterval,
                retry: configuration.retry),
            redis: redis, promoteEvery: .milliseconds(500), clock: clock, metrics: metrics, logger: logger,
            deadLetterWrites: { handler.deadLetterWrites($0, $1) },
            handler: { try await handler.handle($0) })
        let grants = GrantSweeper(
            redis: redis, keys: keys, projects: [ProjectID.default] + configuration.projectCatalogs.keys.sorted(),
            userEventLog: configuration.userEventLog, clock: clock, logger: logger)
        var services: [any Service] = [redis, operatorsRedis] + work + [grants]
        if configuration.eventsRetention != nil || configuration.eventsBounds != StreamBounds() {
            services.append(
                StreamJanitor(
                    streams: keys.partitions.map { keys.events(partition: $0) }, redis: redis, interval: .seconds(60),
                    retention: configuration.eventsRetention, bounds: configuration.eventsBounds, clock: clock,
                    metrics: metrics, logger: logger))
        }
        let endpoints = OperatorEndpoints(
            redis: operatorsRedis, libraries: functionLibraries, metrics: { registry.emitToBuffer() })
        services.append(
            endpoints.application(
                host: configuration.metricsHost, port: configuration.metricsPort, serverName: "fulfiller",
                onServerRunning: onMetricsServerRunning, logger: logger))
        return configuration.shared.serviceGroup(
            services: services, handlesSignals: handlesSignals, metrics: metrics.factory, logger: logger)
    }
}
