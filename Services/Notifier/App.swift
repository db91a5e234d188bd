import Logging
import Prometheus
import ServiceKit
import ServiceLifecycle

/// Entry point of `notifier` (settings: ``NotifierConfiguration``): reads the configuration, builds the service group
/// (``build(configuration:logger:registry:consumer:handlesSignals:clock:transport:onMetricsServerRunning:)``) and runs it
/// until SIGTERM or SIGINT, as every service runs (``ServiceKit/TollgateService/main()``); a bad setting or an unreachable
/// Redis ends it as ``Core/Fatal`` says.
@main
struct App: TollgateService {
    static let tool = "notifier"

    static func serviceGroup(
        configuration: NotifierConfiguration, logger: Logger, registry: PrometheusCollectorRegistry
    ) async throws -> ServiceGroup {
        try await build(configuration: configuration, logger: logger, registry: registry)
    }
}
