import Logging
package import PostgresNIO

/// The export's tables and views (docs/EXPORT.md): numbered SQL files in `Migrations/`, compiled in, applied in order
/// at start by every exporter replica and by `tollctl export`. One session at a time applies them (a PostgreSQL
/// advisory lock); each file runs in its own transaction with its row in `schema_migrations`, so a file is applied
/// wholly once or not at all. A database with a migration this build does not know is refused: an older exporter
/// must not write into a newer schema.
package enum ExportSchema {
    package struct Migration: Sendable {
        package var version: Int
        package var name: String
        package var sql: String
    }

    /// Every migration, oldest first.
    package static let migrations: [Migration] = [
        Migration(version: 1, name: "tables", sql: String(decoding: PackageResources.m001_tables_sql, as: UTF8.self)),
        Migration(version: 2, name: "views", sql: String(decoding: PackageResources.m002_views_sql, as: UTF8.self)),
        Migration(version: 3, name: "sides", sql: String(decoding: PackageResources.m003_sides_sql, as: UTF8.self)),
    ]

    /// The advisory lock key (`pg_advisory_lock`): "tollgate" in ASCII, as a number no other tool is likely to pick.
    static let lockKey: Int64 = 0x746f_6c6c_6761_7465

    /// Applies the migrations the database lacks; returns their versions.
    @discardableResult
    package static func migrate(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withConnection { connection in
            try await connection.perform("SELECT pg_advisory_lock(\(lockKey))", logger: logger)
            do {
                let applied = try await apply(on: connection, logger: logger)
                try await connection.perform("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
                return applied
            } catch {
                // The lock ends with the session anyway; this returns it before the connection goes back to the pool.
                try? await connection.perform("SELECT pg_advisory_unlock(\(lockKey))", logger: logger)
                throw error
            }
        }
    }

    private static func apply(on connection: PostgresConnection, logger: Logger) async throws -> [Int] {
        try await connection.perform(
            """
            CREATE TABLE IF NOT EXISTS schema_migrations (
                version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
            """, logger: logger)
        var done = Set<Int>()
        for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: logger)
            .decode(Int.self)
        {
            done.insert(version)
        }
        let known = Set(migrations.map(\.version))
        if let unknown = done.subtracting(known).max() {
            throw ExportError.schemaTooNew(version: unknown, known: known.max() ?? 0)
        }
        var applied: [Int] = []
        for migration in migrations where !done.contains(migration.version) {
            try await connection.withTransaction(logger: logger) { connection in
                for statement in SQLScript.statements(migration.sql) {
                    try await connection.perform(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.perform(
                    "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))",
                    logger: logger)
            }
            logger.info("Export schema migrated", metadata: ["version": "\(migration.version)", "name": "\(migration.name)"])
            applied.append(migration.version)
        }
        return applied
    }
}
