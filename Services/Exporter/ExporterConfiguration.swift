package import Core
package import Export
package import Ledger
import Pipeline
package import ServiceKit

/// The exporter's settings, read from the environment by ``init(environment:)``.
///
/// Keys (besides the shared `TOLLGATE_REDIS_URL`, `TOLLGATE_KEY_PREFIX`, `TOLLGATE_PARTITIONS`, `LOG_LEVEL`,
/// `TOLLGATE_SHUTDOWN_GRACE`):
/// - `TOLLGATE_POSTGRES_URL` — required: `postgres://user:password@host:port/database[?sslmode=disable|prefer|require]`
/// - `TOLLGATE_CATALOG` — the catalog the fulfiller credits by, copied into the `products` table at start (the exported
///   project's)
/// - `TOLLGATE_EXPORT_PROJECT` — the project this exporter exports (`default`; docs/PROJECTS.md): one exporter
///   deployment per project, each into a database of its own, its group `exporter` (default) or `exporter:<id>`
/// - `TOLLGATE_EXPORTER_CONCURRENCY` — events written at once per replica, 1-256 (16); PostgreSQL connections are
///   this plus 2
/// - `TOLLGATE_CLAIM_MIN_IDLE_MS` / `TOLLGATE_CLAIM_INTERVAL_MS` — when a stopped replica's entries are taken over
///   (30 s, every 5 s)
/// - `TOLLGATE_METRICS_HOST` / `TOLLGATE_METRICS_PORT` — `/metrics`, `/healthz` and `/readyz` listener (`0.0.0.0`, 9093)
package struct ExporterConfiguration: ServiceConfiguration {
    package var shared: SharedConfiguration
    package var postgres: PostgresSettings
    package var catalog: Catalog
    /// The project exported (``Pipeline/Keys/inProject(_:)``).
    package var project = ProjectID.default
    package var concurrency = 16
    package var claimMinIdle: Duration = .seconds(30)
    package var claimInterval: Duration = .seconds(5)
    package var metricsHost = "0.0.0.0"
    package var metricsPort = 9093

    package init(shared: SharedConfiguration, postgres: PostgresSettings, catalog: Catalog) {
        self.shared = shared
        self.postgres = postgres
        self.catalog = catalog
    }

    package init(environment: [String: String]) throws(ConfigurationError) {
        let reader = EnvironmentReader(environment)
        let shared = try SharedConfiguration(reader: reader)
        let url = try reader.required("TOLLGATE_POSTGRES_URL", "the PostgreSQL database to export into")
        self.init(shared: shared, postgres: try PostgresSettings(url: url), catalog: try Catalog.configured(reader))
        let named = reader.string("TOLLGATE_EXPORT_PROJECT", default: ProjectID.default.rawValue)
        guard let project = ProjectID(named) else {
            throw ConfigurationError(variable: "TOLLGATE_EXPORT_PROJECT", problem: "must be 1-32 of a-z, 0-9 and '-'")
        }
        self.project = project
        concurrency = try reader.int("TOLLGATE_EXPORTER_CONCURRENCY", default: concurrency, range: 1...256)
        postgres.maximumConnections = concurrency + 2
        claimMinIdle = try reader.milliseconds("TOLLGATE_CLAIM_MIN_IDLE_MS", default: 30_000, range: 100...86_400_000)
        claimInterval = try reader.milliseconds("TOLLGATE_CLAIM_INTERVAL_MS", default: 5000, range: 10...600_000)
        metricsHost = reader.string("TOLLGATE_METRICS_HOST", default: metricsHost)
        metricsPort = try reader.int("TOLLGATE_METRICS_PORT", default: metricsPort, range: 0...65535)
    }
}
