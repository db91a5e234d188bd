import Core
import Export
import Foundation
import Ledger
import Logging
import Pipeline
import PostgresNIO
import Prometheus
import Redis
import ServiceKit
import ServiceLifecycle
import TestSupport

@testable import exporter

/// A ledger on a real redis-server (``LedgerHarness``), a real PostgreSQL (``PostgresServer``), and a client on the
/// database for the test's own queries.
struct ExportRig: Sendable {
    let ledger: LedgerHarness
    let postgres: PostgresServer
    let client: PostgresClient
    let settings: PostgresSettings

    static func with(partitions: Int = 2, _ body: (ExportRig) async throws -> Void) async throws {
        try await LedgerHarness.with(partitions: partitions) { ledger in
            try await withPostgresServer { postgres in
                let settings = try PostgresSettings(url: postgres.url)
                let client = PostgresClient(configuration: settings.clientConfiguration, backgroundLogger: testLogger)
                let running = Task { await client.run() }
                defer { running.cancel() }
                try await ExportSchema.migrate(client, logger: testLogger)
                try await body(ExportRig(ledger: ledger, postgres: postgres, client: client, settings: settings))
            }
        }
    }

    /// Starts an exporter replica (``App/build``) of `project` on the rig's Redis and database.
    func exporter(
        consumer: String, claimMinIdle: Duration = .seconds(3), project: ProjectID = .default,
        registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry(), logger: Logger = testLogger
    ) async throws -> RunningExporter {
        var configuration = ExporterConfiguration(
            shared: SharedConfiguration(redis: ledger.server.configuration(), keys: ledger.keys), postgres: settings,
            catalog: testCatalog)
        configuration.project = project
        configuration.metricsHost = "127.0.0.1"
        configuration.metricsPort = 0
        configuration.claimMinIdle = claimMinIdle
        configuration.claimInterval = .milliseconds(200)
        let group = try await App.build(
            configuration: configuration, logger: logger, registry: registry, consumer: consumer, handlesSignals: false)
        return RunningExporter(group: group, task: Task { try await group.run() })
    }

    /// Runs one exporter replica until every events stream is drained, then stops it; false when it did not drain.
    func exportEverything(timeout: Duration = .seconds(30)) async throws -> Bool {
        let exporter = try await exporter(consumer: "e-\(UUID().uuidString.prefix(8))")
        let drained = try await eventually(timeout: timeout) { try await self.drained() }
        try await exporter.shutdown()
        return drained
    }

    /// `tollctl audit --export`'s comparison of the database with the ledger.
    func audit() async throws -> ExportAudit.Report {
        try await ExportAudit(redis: ledger.redis, keys: ledger.keys, client: client, logger: testLogger).run()
    }

    /// Applies `event` to the ledger (with its hand-overs), as the fulfiller does.
    @discardableResult
    func apply(_ event: PurchaseEvent) async throws -> LedgerOutcome { try await ledger.deliver(event) }

    /// The first column of the query's rows, as text.
    func strings(_ sql: String) async throws -> [String] {
        var values: [String] = []
        for try await value in try await client.query(PostgresQuery(unsafeSQL: sql), logger: testLogger).decode(String?.self) {
            values.append(value ?? "NULL")
        }
        return values
    }

    /// One number the query answers (0 for no row or NULL).
    func number(_ sql: String) async throws -> Int64 {
        Int64(try await strings("SELECT (\(sql))::text").first ?? "") ?? 0
    }

    /// Every table's rows, as text, in a fixed order: what "the same rows" compares (less the times of writing).
    func dump() async throws -> [String] {
        var rows: [String] = []
        for (table, key) in [
            ("events", "id"), ("transactions", "transaction_id"), ("users", "user_id"), ("subscriptions", "event_id"),
            ("grants", "grant_id"), ("spends", "event_id"),
        ] {
            rows += try await strings(
                "SELECT (to_jsonb(t) - 'exported_at' - 'updated_at')::text FROM \(table) t ORDER BY \(key)")
        }
        return rows
    }

    /// Whether every partition's events stream has been exported (nothing pending or unread in the group of
    /// `project`'s exporters).
    func drained(project: ProjectID = .default) async throws -> Bool {
        for partition in ledger.keys.partitions {
            let stream = ledger.keys.events(partition: partition).stream
            // A stream the exporter has not created its group on yet (MKSTREAM) is not drained.
            guard let groups = try? await ledger.redis.xinfoGroups(stream) else { return false }
            guard let group = groups.first(where: { $0.name == App.consumerGroup(of: project) }) else { return false }
            guard group.pending == 0, group.lag == 0 else { return false }
        }
        return true
    }
}

struct RunningExporter {
    let group: ServiceGroup
    let task: Task<Void, any Error>

    func shutdown() async throws {
        await group.triggerGracefulShutdown()
        try await task.value
    }
}

/// Transactions with Apple's revenue facts.
enum Sale {
    static func coins(
        _ tid: String, quantity: Int = 1, price: Int64 = 990, currency: String = "EUR", purchase: Int64 = testNow - day
    ) -> PurchaseEventTransaction {
        PurchaseEventTransaction(
            transactionId: tid, originalTransactionId: tid, productId: "coins100", quantity: quantity, purchaseDate: purchase,
            inAppOwnershipType: "PURCHASED", price: price, currency: currency, storefront: "DEU")
    }

    static func refund(_ sale: PurchaseEventTransaction, at revoked: Int64 = testNow) -> PurchaseEventTransaction {
        var refunded = sale
        refunded.revocationDate = revoked
        refunded.revocationReason = 1
        return refunded
    }
}
