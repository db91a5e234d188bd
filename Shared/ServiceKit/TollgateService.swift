package import Core
import Foundation
package import Logging
import Metrics
package import Prometheus
package import ServiceLifecycle

/// A service's settings as its executable reads them: from the environment, with the settings every service shares.
package protocol ServiceConfiguration: Sendable {
    /// Reads and validates the settings (pass `ProcessInfo.processInfo.environment`).
    init(environment: [String: String]) throws(ConfigurationError)
    /// The settings every service shares (Redis, keys, log level, shutdown grace).
    var shared: SharedConfiguration { get }
}

/// A Tollgate service's executable (ingest, verifier, fulfiller, notifier, exporter): its `App` declares itself and
/// gets the one `main` every service starts by (``main()``). Each `App` also has `static func build(configuration:
/// logger:registry:…)`, the one builder tests call with their own parameters (port 0, a consumer name, a clock).
package protocol TollgateService {
    associatedtype Configuration: ServiceConfiguration

    /// The executable's name: its logger's label, and the first word of its fatal line (``Core/Fatal``).
    static var tool: String { get }

    /// The process's group as `main` runs it: `build` with the configuration read, the tool's logger, and the
    /// registry `/metrics` exports (`MetricsSystem` is bootstrapped on it), every test parameter at its default.
    static func serviceGroup(
        configuration: Configuration, logger: Logger, registry: PrometheusCollectorRegistry
    ) async throws -> ServiceGroup
}

extension TollgateService {
    /// Reads the configuration from the environment, sends the logs to standard error at `LOG_LEVEL`, bootstraps the
    /// metrics on a registry of the process, builds the service group and runs it until SIGTERM or SIGINT. A bad
    /// setting, an unreachable Redis or any other error from the start ends the process as ``Core/Fatal`` says
    /// (`<tool>: error: <code>: <message>`, exit status 1).
    package static func main() async {
        TollgateVersion.answerIfAsked(tool: tool)
        do {
            let configuration = try Configuration(environment: ProcessInfo.processInfo.environment)
            configuration.shared.bootstrapLogging()
            let registry = PrometheusCollectorRegistry()
            MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
            let group = try await serviceGroup(configuration: configuration, logger: Logger(label: tool), registry: registry)
            try await group.run()
        } catch {
            Fatal.exit(tool: tool, error: error)
        }
    }
}
