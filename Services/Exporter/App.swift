import Logging
import Prometheus
import ServiceKit
import ServiceLifecycle

/// Entry point of `exporter` (settings: ``ExporterConfiguration``): reads the configuration, builds the service group
/// (``build(configuration:logger:registry:consumer:handlesSignals:startupTimeout:onMetricsServerRunning:)``) and runs it until
/// SIGTERM or SIGINT, as every service runs (``ServiceKit/TollgateService/main()``); a bad setting, an unreachable Redis or
/// a database it cannot migrate ends it as ``Core/Fatal`` says.
@main
struct App: TollgateService {
    static let tool = "exporter"

    static func serviceGroup(
        configuration: ExporterConfiguration, logger: Logger, registry: PrometheusCollectorRegistry
    ) async throws -> ServiceGroup {
        try await build(configuration: configuration, logger: logger, registry: registry)
    }
}
