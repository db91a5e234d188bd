import Core
import Foundation
import Logging
import Metrics
import Pipeline
import Prometheus
import ServiceKit
import ServiceLifecycle

/// Entry point of `fulfiller`: reads the configuration, builds the service group and runs it until SIGTERM or
/// SIGINT; a bad setting or an unreachable Redis ends it as ``Core/Fatal`` says.
@main
struct App {
    static func main() async {
        do {
            let configuration = try FulfillerConfiguration(environment: ProcessInfo.processInfo.environment)
            configuration.shared.bootstrapLogging()
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            let group = try await build(configuration: configuration, logger: Logger(label: "fulfiller"), registry: registry)
            try await group.run()
        } catch {
            Fatal.exit(tool: "fulfiller", error: error)
        }
    }
}
