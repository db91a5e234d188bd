import Core
import CoreMetrics
import Foundation
import Hummingbird
import Logging
import Pipeline
import ServiceKit
import ServiceLifecycle

/// `ingest`: Tollgate's HTTP front door. Settings are environment variables, listed on ``IngestConfiguration``;
/// a bad setting or an unreachable Redis ends it as ``Core/Fatal`` says.
@main
struct App {
    static func main() async {
        do {
            let configuration = try IngestConfiguration(environment: ProcessInfo.processInfo.environment)
            configuration.shared.bootstrapLogging()
            let app = try await buildApplication(configuration: configuration, logger: Logger(label: "ingest"))
            try await configuration.shared.serviceGroup(services: [app], metrics: MetricsSystem.factory, logger: app.logger).run()
        } catch {
            Fatal.exit(tool: "ingest", error: error)
        }
    }
}
