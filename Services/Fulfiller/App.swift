import Foundation
import Logging
import Metrics
import Pipeline
import Prometheus

/// Entry point of `fulfiller`: reads the configuration (failing fast naming the variable), builds the
/// service group and runs it until SIGTERM or SIGINT.
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
            FileHandle.standardError.write(Data("fulfiller: error: \(error)\n".utf8))
            exit(1)
        }
    }
}
