import ArgumentParser
import Core
import Export
import Foundation
import Ledger
import Pipeline

/// `tollctl audit`: recomputes every user's coin balance from the transaction records (plus what labelled grants
/// added, ``Ledger/LedgerAudit``) and compares it with the stored balance. Prints `users=N transactions=N
/// differences=N`, then one line per difference, then the users with grants apart (`granted users=N`, one line each:
/// never differences against Apple's records); exits 1 when there is any difference. `--project ID` audits that
/// project's ledger; without it every project `TOLLGATE_APPS` lists, each report after a `project <id>` line (one
/// project, `default`, prints no such line).
///
/// With `--export`: compares the PostgreSQL export (`TOLLGATE_POSTGRES_URL`) with the ledger instead
/// (``Export/ExportAudit``): `users=N transactions=N`, one line per difference, then `export audit: N differences`.
struct AuditCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "audit", abstract: "Recompute balances from the transaction records and report differences.")

    @Flag(help: "Compare the PostgreSQL export (TOLLGATE_POSTGRES_URL) with the ledger instead.")
    var export = false

    @OptionGroup var project: ProjectOption

    func run() async throws {
        if export { return try await runExport() }
        // Without --project, every configured project in turn (only `default` without TOLLGATE_APPS's projects).
        let configured = try ProjectOption.configured()
        let projects = try project.isGiven ? [project.resolve()] : configured
        var differences = 0
        try await UserLedgerConnection.with { redis, allKeys in
            for project in projects {
                if configured != [.default] { print("project \(project)") }
                let report = try await LedgerAudit(redis: redis, keys: allKeys.inProject(project)).run()
                print("users=\(report.users) transactions=\(report.transactions) differences=\(report.differences.count)")
                for difference in report.differences {
                    print(
                        "  user=\(difference.user)\(difference.side == .sandbox ? "  side=sandbox" : "")  stored=\(difference.stored)  "
                            + "recomputed=\(difference.recomputed)  "
                            + "difference=\(difference.stored - difference.recomputed)")
                }
                print("granted users=\(report.granted.count)")
                for granted in report.granted {
                    print("  user=\(granted.user)  grants=\(granted.grants)  grantedCoins=\(granted.coins)")
                }
                differences += report.differences.count
            }
        }
        if differences > 0 { throw ExitCode(1) }
    }

    private func runExport() async throws {
        let settings = try ExportDatabase.settings(ProcessInfo.processInfo.environment)
        var differences = 0
        // One project's export (`--project`, default `default`): each project's exporter writes a database of its own.
        let exported = try project.resolve()
        try await UserLedgerConnection.with(commandTimeout: .seconds(30)) { redis, keys in
            let keys = keys.inProject(exported)
            let report = try await settings.withMigratedClient(logger: ExportDatabase.logger) { client in
                try await ExportAudit(redis: redis, keys: keys, client: client, logger: ExportDatabase.logger).run()
            }
            print("users=\(report.users) transactions=\(report.transactions)")
            for difference in report.differences { print("  \(difference)") }
            print("export audit: \(report.differences.count) differences")
            differences = report.differences.count
        }
        if differences > 0 { throw ExitCode(1) }
    }
}
