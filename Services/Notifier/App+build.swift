import HTTPClient
import Logging
import Pipeline
import Prometheus
import Redis
import ServiceKit
import ServiceLifecycle
import Webhooks

extension App {
    /// The Redis Function libraries the notifier loads at its start, and so the ones `/readyz` checks.
    static let functionLibraries = [NotifierFunctions.library]

    /// Builds the notifier: the Redis client (notifier functions loaded), one ``Webhooks/WebhookDelivery`` per endpoint
    /// over every partition's events stream, and the operators' listener (`/healthz`, `/readyz`, `/metrics`:
    /// `OperatorEndpoints`), as one `ServiceGroup` shut down gracefully on SIGTERM and SIGINT (`handlesSignals`).
    /// Tests call this directly (metrics port 0, their own consumer name, clock and transport, no signal handling).
    static func build(
        configuration: NotifierConfiguration,
        logger: Logger,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(),
        consumer: String = ConsumerName.unique(),
        handlesSignals: Bool = true,
        clock: PipelineClock = .system,
        transport: (any HTTPTransport)? = nil,
        onMetricsServerRunning: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> ServiceGroup {
        let keys = configuration.shared.keys
        let metrics = MetricHandles(factory: PrometheusMetricsFactory(registry: registry))
        let (redis, operatorsRedis) = try await configuration.shared.connectWorker(
            clientName: "notifier", libraries: functionLibraries, logger: logger)
        let sender = WebhookSender(
            transport: transport ?? WebhookSender.makeTransport(connectionsPerHost: configuration.delivery.concurrency),
            timeout: configuration.webhooks.timeout)
        var services: [any Service] = [redis, operatorsRedis]
        for endpoint in configuration.webhooks.endpoints {
            services.append(
                WebhookDelivery(
                    endpoint: endpoint, keys: keys.partitions.map { keys.webhook(endpoint.name, partition: $0) }, redis: redis,
                    sender: sender, configuration: configuration.delivery, consumer: consumer, clock: clock,
                    metrics: WebhookMetrics(handles: metrics), logger: logger))
        }
        let endpoints = OperatorEndpoints(
            redis: operatorsRedis, libraries: functionLibraries, metrics: { registry.emitToBuffer() })
        services.append(
            endpoints.application(
                host: configuration.metricsHost, port: configuration.metricsPort, serverName: "notifier",
                onServerRunning: onMetricsServerRunning, logger: logger))
        return configuration.shared.serviceGroup(
            services: services, handlesSignals: handlesSignals, metrics: metrics.factory, logger: logger)
    }
}
