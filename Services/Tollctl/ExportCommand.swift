import ArgumentParser
import Core
import Export
import Foundation
import Ledger
import Logging
import Pipeline

/// `tollctl export --since DATE`: rebuilds the export's tables from the ledger (``Export/ExportBackfill``) in the
/// database of `TOLLGATE_POSTGRES_URL` (migrated first), and copies the catalog into `products` when
/// `TOLLGATE_CATALOG` is set. Prints what it wrote: `events=N users=N transactions=N unreadable=N skipped=N`, after
/// a line `skipped <what>: <why>` for each thing it could not write (an unreadable event, a write PostgreSQL refused
/// for what it holds), and then exits 1: the rest is written, and the audit names what is missing. `--project ID`
/// exports that project's ledger (docs/PROJECTS.md: one database per project).
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Rebuild the PostgreSQL export's tables from the ledger (TOLLGATE_POSTGRES_URL).")

    @Option(help: "Export the events from this day on (YYYY-MM-DD, UTC); records and users are always exported whole.")
    var since: String

    @OptionGroup var project: ProjectOption

    func validate() throws {
        guard Self.milliseconds(day: since) != nil else { throw ValidationError("--since must be a day, YYYY-MM-DD") }
    }

    /// Milliseconds since 1970 of the start of `day` (UTC).
    static func milliseconds(day: String) -> Int64? { UTCTime.milliseconds(iso8601: day + "T00:00:00Z") }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        let settings = try ExportDatabase.settings(environment)
        let catalog = try Catalog.configuredIfAny(EnvironmentReader(environment))
        let since = Self.milliseconds(day: since) ?? 0
        let products = catalog
        let exported = try project.resolve()
        try await UserLedgerConnection.with(commandTimeout: .seconds(30)) { redis, keys in
            let keys = keys.inProject(exported)
            let report = try await settings.withMigratedClient(logger: ExportDatabase.logger) { client in
                if let products { try await ExportProducts.replace(with: products, on: client, logger: ExportDatabase.logger) }
                let writer = ExportWriter(client: client, logger: ExportDatabase.logger)
                return try await ExportBackfill(redis: redis, keys: keys, writer: writer, logger: ExportDatabase.logger)
                    .run(sinceMilliseconds: since)
            }
            for skipped in report.skipped { print("skipped \(skipped)") }
            print(
                "events=\(report.events) users=\(report.users) transactions=\(report.transactions) "
                    + "unreadable=\(report.unreadable) skipped=\(report.skipped.count)")
            if !report.skipped.isEmpty { throw ExitCode(1) }
        }
    }
}

/// The export database of the tools: `TOLLGATE_POSTGRES_URL`.
enum ExportDatabase {
    static let logger = Logger(label: "tollctl", factory: { _ in SwiftLogNoOpLogHandler() })

    static func settings(_ environment: [String: String]) throws -> PostgresSettings {
        guard let url = environment["TOLLGATE_POSTGRES_URL"], !url.isEmpty else {
            throw ToolError("invalid_configuration", "TOLLGATE_POSTGRES_URL is required: the database of the export")
        }
        var settings = try PostgresSettings(url: url)
        settings.maximumConnections = 2
        return settings
    }
}
