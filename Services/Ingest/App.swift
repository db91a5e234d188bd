import Foundation
import Hummingbird
import Logging
import Pipeline

/// `ingest`: Tollgate's HTTP front door. Settings are environment variables, listed on ``IngestConfiguration``.
@main
struct App {
    static func main() async {
        var logger = Logger(label: "ingest")
        do {
            let configuration = try IngestConfiguration(environment: ProcessInfo.processInfo.environment)
            configuration.shared.bootstrapLogging()
            logger = Logger(label: "ingest")
            let app = try await buildApplication(configuration: configuration, logger: logger)
            try await app.runService(gracefulShutdownSignals: [.sigterm, .sigint])
        } catch {
            logger.critical("ingest failed", metadata: ["error": "\(error)"])
            FileHandle.standardError.write(Data("error: \(error)\n".utf8))
            exit(1)
        }
    }
}
