import AppStore
import AppStoreTesting
import ArgumentParser
import Core
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import UnixSignals

/// `appstore-sim`: a local App Store for development, tests and load runs. Flags here; the `SIM_*`
/// environment variables are listed on ``SimConfiguration``.
@main
struct App: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appstore-sim", abstract: "A local stand-in for Apple's App Store servers.",
        version: TollgateVersion.line(tool: "appstore-sim"))

    @Option(name: .customLong("ca-dir"), help: "Load the test CA from this directory, or create and save it there.")
    var caDirectory: String?

    @Flag(name: .customLong("legacy-ios6"), help: "Answer verifyReceipt in the iOS 6 shape.")
    var legacyIOS6 = false

    /// Serves until SIGTERM or SIGINT; a bad setting or a CA it cannot load ends it as ``Core/Fatal`` says.
    func run() async {
        do {
            try await serve()
        } catch {
            Fatal.exit(tool: "appstore-sim", error: error)
        }
    }

    private func serve() async throws {
        var configuration = try SimConfiguration(environment: ProcessInfo.processInfo.environment)
        configuration.legacyIOS6 = legacyIOS6
        configuration.caDirectory = caDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
        var logger = Logger(label: "appstore-sim")
        logger.logLevel = configuration.logLevel
        let authority =
            try configuration.caDirectory.map { try TestCertificateAuthority.loadOrCreate(directory: $0) }
            ?? TestCertificateAuthority()
        logger.info(
            "appstore-sim starting",
            metadata: [
                "host": "\(configuration.host)", "port": "\(configuration.port)",
                "notify": "\(configuration.notifyURL?.absoluteString ?? "off")", "legacy_ios6": "\(legacyIOS6)",
            ])
        let app = buildApplication(configuration: configuration, authority: authority, logger: logger)
        var group = ServiceGroupConfiguration(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger)
        group.maximumGracefulShutdownDuration = configuration.shutdownGrace
        try await ServiceGroup(configuration: group).run()
    }
}
