import Hummingbird
import Logging
import Prometheus
import ServiceKit
import ServiceLifecycle

/// `ingest`: Tollgate's HTTP front door. Settings are environment variables, listed on ``IngestConfiguration``; it
/// reads them, builds the application (``build(configuration:logger:registry:clock:onServerRunning:onOperatorsServerRunning:router:)``)
/// and runs it until SIGTERM or SIGINT, as every service runs (``ServiceKit/TollgateService/main()``); a bad setting or an
/// unreachable Redis ends it as ``Core/Fatal`` says.
@main
struct App: TollgateService {
    static let tool = "ingest"

    /// The application in a group of its own, shut down gracefully on SIGTERM and SIGINT.
    static func serviceGroup(
        configuration: IngestConfiguration, logger: Logger, registry: PrometheusCollectorRegistry
    ) async throws -> ServiceGroup {
        let app = try await build(configuration: configuration, logger: logger, registry: registry)
        return configuration.shared.serviceGroup(
            services: [app], metrics: PrometheusMetricsFactory(registry: registry), logger: app.logger)
    }
}
