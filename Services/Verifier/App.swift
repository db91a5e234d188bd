import Logging
import Prometheus
import ServiceKit
import ServiceLifecycle
import Verification

/// `verifier`: Apple's rules for every job (the `Verification` library). Settings are environment variables, listed on
/// `VerifierConfiguration`; it reads them, builds the service group
/// (``build(configuration:logger:registry:consumer:handlesSignals:onMetricsServerRunning:)``) and runs it until SIGTERM or
/// SIGINT, as every service runs (``ServiceKit/TollgateService/main()``); a bad setting or an unreachable Redis ends it as
/// ``Core/Fatal`` says.
@main
struct App: TollgateService {
    static let tool = "verifier"

    static func serviceGroup(
        configuration: VerifierConfiguration, logger: Logger, registry: PrometheusCollectorRegistry
    ) async throws -> ServiceGroup {
        try await build(configuration: configuration, logger: logger, registry: registry)
    }
}
