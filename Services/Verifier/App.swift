import Foundation
import Logging
import Metrics
import Pipeline
import Prometheus

/// Entry point of `verifier`: reads the configuration (failing fast naming the variable), builds the
/// service group and runs it until SIGTERM or SIGINT. `verifier reconcile …` runs one reconcile pass instead
/// (``ReconcileOnce``, what `tollctl reconcile` runs).
@main
struct App {
    static func main() async {
        if CommandLine.arguments.dropFirst().first == "reconcile" {
            exit(await ReconcileOnce.main(arguments: Array(CommandLine.arguments.dropFirst(2))))
        }
        do {
            let configuration = try VerifierConfiguration(environment: ProcessInfo.processInfo.environment)
            configuration.shared.bootstrapLogging()
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            let group = try await build(configuration: configuration, logger: Logger(label: "verifier"), registry: registry)
            try await group.run()
        } catch {
            FileHandle.standardError.write(Data("verifier: error: \(error)\n".utf8))
            exit(1)
        }
    }
}
