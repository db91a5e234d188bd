import Core
import Foundation
import Logging
import Metrics
import Pipeline
import Prometheus
import ServiceKit
import ServiceLifecycle
import Verification

/// `verifier`: Apple's rules for every job (the `Verification` library). Settings are environment variables,
/// listed on `VerifierConfiguration`; runs until SIGTERM or SIGINT; a bad setting or an unreachable Redis ends
/// it as ``Core/Fatal`` says.
@main
struct App {
    static func main() async {
        do {
            let configuration = try VerifierConfiguration(environment: ProcessInfo.processInfo.environment)
            configuration.shared.bootstrapLogging()
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            let group = try await VerifierServices.build(
                configuration: configuration, logger: Logger(label: "verifier"), registry: registry)
            try await group.run()
        } catch {
            Fatal.exit(tool: "verifier", error: error)
        }
    }
}
