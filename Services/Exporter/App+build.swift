import Core
import Export
import Ledger
import Logging
import Pipeline
import PostgresNIO
import Prometheus
import Redis
import ServiceKit
import ServiceLifecycle

extension App {
    /// The Redis Function libraries the exporter loads at its start, and so the ones `/readyz` checks.
    static let functionLibraries = [ExportSnapshot.library]

    /// The consumer group every exporter replica of the default project joins on every events stream.
    static let consumerGroup = "exporter"

    /// The group of the exporters of `project`: ``consumerGroup``, or `exporter:<id>` for another project (each
    /// project's exporters read the shared events streams at their own pace, docs/PROJECTS.md).
    static func consumerGroup(of project: ProjectID) -> String {
        project.isDefault ? consumerGroup : "\(consumerGroup):\(project.rawValue)"
    }

    /// Builds the exporter: the Redis client (export functions loaded), the PostgreSQL client, the schema migrated and
    /// the catalog copied (``Export/ExportSchema``, ``Export/ExportProducts``; PostgreSQL is waited for at start, up to
    /// `startupTimeout`), the consumer of every partition's events stream (``Export/ExportHandler``), and the
    /// operators' listener, as one `ServiceGroup` shut down gracefully on SIGTERM and SIGINT (`handlesSignals`).
    static func build(
        configuration: ExporterConfiguration,
        logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        consumer: String = ConsumerName.unique(),
        handlesSignals: Bool = true,
        startupTimeout: Duration = .seconds(60),
        onMetricsServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> ServiceGroup {
        let keys = configuration.shared.keys.inProject(configuration.project)
        let metrics = MetricHandles(factory: PrometheusMetricsFactory(registry: registry))
        let consumerGroup = Self.consumerGroup(of: configuration.project)
        let (redis, operatorsRedis) = try await configuration.shared.connectWorker(
            clientName: "exporter", libraries: functionLibraries, logger: logger)
        do {
            // A client of its own for the start (a client runs once): migrations take one connection.
            var settings = configuration.postgres
            settings.maximumConnections = 1
            let setup = PostgresClient(configuration: settings.clientConfiguration, backgroundLogger: logger)
            let running = Task { await setup.run() }
            defer { running.cancel() }
            try await prepare(setup, catalog: configuration.catalog, timeout: startupTimeout, logger: logger)
        } catch {
            redis.close()
            operatorsRedis.close()
            throw error
        }
        let postgres = PostgresClient(configuration: configuration.postgres.clientConfiguration, backgroundLogger: logger)
        logger.info("Export database ready", metadata: ["database": "\(configuration.postgres)"])
        var handler = ExportHandler(
            redis: redis, keys: keys, writer: ExportBatcher(writer: ExportWriter(client: postgres, logger: logger)),
            group: consumerGroup,
            consumer: consumer, metrics: ExportMetrics(handles: metrics), logger: logger)
        // A waiting entry must be touched well within the claim time, or another replica takes it over.
        handler.heartbeatInterval = min(.seconds(5), configuration.claimMinIdle / 3)
        let events = keys.partitions.map { PartitionStream(partition: $0, keys: keys.events(partition: $0)) }
        var consuming = StreamConsumerConfiguration(
            streams: events, group: consumerGroup, consumer: consumer, concurrency: configuration.concurrency,
            readCount: min(max(configuration.concurrency * 2, 16), 256), claimMinIdle: configuration.claimMinIdle,
            claimInterval: configuration.claimInterval)
        // The events streams are the notifier's and the app's too: acknowledged with XACK only, never deleted, never
        // re-added, no poison limit (the handler waits out every fault and decides what is dead).
        consuming.sharesStream = true
        let consumerService = StreamConsumer(
            configuration: consuming, redis: redis, metrics: metrics, logger: logger,
            handler: { [handler] in await handler.handle($0) })
        let endpoints = OperatorEndpoints(
            redis: operatorsRedis, libraries: functionLibraries, metrics: { registry.emitToBuffer() })
        let services: [any Service] = [
            redis, operatorsRedis, PostgresService(client: postgres), consumerService,
            endpoints.application(
                host: configuration.metricsHost, port: configuration.metricsPort, serverName: "exporter",
                onServerRunning: onMetricsServerRunning, logger: logger),
        ]
        return configuration.shared.serviceGroup(
            services: services, handlesSignals: handlesSignals, metrics: metrics.factory, logger: logger)
    }

    /// Migrates the schema and copies the catalog, trying again every second while PostgreSQL does not answer.
    static func prepare(_ postgres: PostgresClient, catalog: Catalog, timeout: Duration, logger: Logger) async throws {
        let deadline = ContinuousClock.now + timeout
        while true {
            do {
                try await ExportSchema.migrate(postgres, logger: logger)
                try await ExportProducts.replace(with: catalog, on: postgres, logger: logger)
                return
            } catch let error as PSQLError
                where ExportHandler.isTransient(sqlState: error.serverInfo?[.sqlState] ?? "08000") && ContinuousClock.now < deadline
            {
                logger.warning("PostgreSQL not reachable yet; waiting", metadata: ["error": "\(String(describing: error.code))"])
                try await Task.sleep(for: .seconds(1))
            }
        }
    }
}

/// Runs the PostgreSQL client's pool for as long as the service group runs.
struct PostgresService: Service {
    let client: PostgresClient

    func run() async throws {
        let running = Task { await client.run() }
        // Shut down after the consumer (services stop in reverse order), so its last writes still have connections.
        await withTaskCancellationOrGracefulShutdownHandler {
            await running.value
        } onCancelOrGracefulShutdown: {
            running.cancel()
        }
    }
}
