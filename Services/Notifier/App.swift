import Core
import Foundation
import Logging
import Metrics
import Pipeline
import Prometheus
import ServiceKit
import ServiceLifecycle

/// Entry point of `notifier`: reads the configuration, builds the service group and runs it until SIGTERM or
/// SIGINT; a bad setting or an unreachable Redis ends it as ``Core/Fatal`` says.
@main
struct App {
    static func main() async {
        do {
            let configuration = try NotifierConfiguration(environment: ProcessInfo.processInfo.environment)
            configuration.shared.bootstrapLogging()
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            let group = try await build(configuration: configuration, logger: Logger(label: "notifier"), registry: registry)
            try await group.run()
        } catch {
            Fatal.exit(tool: "notifier", error: error)
        }
    }
}
