import ArgumentParser
import Foundation
import Logging
import Pipeline
import Redis
import ServiceKit
import Verification

/// `tollctl reconcile [--since DATE] [--dry-run]`: runs one reconcile pass now — Apple's Notification History
/// from the checkpoint (or `--since`), the subscription sweep — and prints what it found, enqueued and
/// corrected. It needs the verifier's whole configuration (App Store Server API key, trusted roots, Apple URLs,
/// `TOLLGATE_*` as the verifier reads them) and runs the pass in this process (`ReconcileOnce`).
struct ReconcileCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "reconcile",
        abstract: "Run one reconcile pass now: recover missed notifications, look up stale subscriptions.")

    @Option(
        help: ArgumentHelp(
            "Read Apple's history from this date instead of the checkpoint (which then does not move).",
            discussion: "2026-11-01, 2026-11-01T08:00:00Z or milliseconds since 1970."))
    var since: String?

    @Flag(help: "Print what would be enqueued and corrected; change nothing (Redis is only read).")
    var dryRun = false

    func run() async throws {
        var arguments = ReconcileOnce.Arguments(dryRun: dryRun)
        if let since {
            guard let date = ReconcileOnce.parseDate(since) else {
                throw ToolError("invalid_argument", "--since needs a date: 2026-11-01, 2026-11-01T08:00:00Z or milliseconds since 1970")
            }
            arguments.since = date
        }
        let configuration = try VerifierConfiguration(environment: ProcessInfo.processInfo.environment)
        configuration.shared.bootstrapLogging(ceiling: .warning)
        let report = try await ReconcileOnce.run(
            configuration: configuration, arguments: arguments,
            logger: Logger(label: "tollctl.reconcile"))
        for line in report.lines { print(line) }
        for line in report.summary(dryRun: dryRun) { print(line) }
    }
}
