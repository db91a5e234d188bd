import Logging
import Prometheus
import ServiceKit
import ServiceLifecycle

/// Entry point of `fulfiller` (settings: ``FulfillerConfiguration``): reads the configuration, builds the service group
/// (``build(configuration:logger:registry:consumer:handlesSignals:clock:onMetricsServerRunning:)``) and runs it until
/// SIGTERM or SIGINT, as every service runs (``ServiceKit/TollgateService/main()``); a bad setting or an unreachable
/// Redis ends it as ``Core/Fatal`` says.
@main
struct App: TollgateService {
    static let tool = "fulfiller"

    static func serviceGroup(
        configuration: FulfillerConfiguration, logger: Logger, registry: PrometheusCollectorRegistry
    ) async throws -> ServiceGroup {
        try await build(configuration: configuration, logger: logger, registry: registry)
    }
}
