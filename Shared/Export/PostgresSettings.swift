package import Core
import Foundation
package import Logging
package import PostgresNIO

/// Where the export goes: `TOLLGATE_POSTGRES_URL`, `postgres://user:password@host[:port]/database[?sslmode=…]`
/// (docs/EXPORT.md). `sslmode` is `disable` (the default: loopback and private networks), `prefer` or `require`.
/// The password never appears in a description or a log line.
package struct PostgresSettings: Sendable, CustomStringConvertible {
    package var host: String
    package var port: Int
    package var username: String
    package var password: String?
    package var database: String
    package var sslMode: String
    /// Connections the exporter's pool may open.
    package var maximumConnections = 20

    /// Parses `url`; throws a ``Core/ConfigurationError`` for `variable` naming what is wrong.
    package init(url: String, variable: String = "TOLLGATE_POSTGRES_URL") throws(ConfigurationError) {
        func bad(_ problem: String) -> ConfigurationError { ConfigurationError(variable: variable, problem: problem) }
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased() else {
            throw bad("is not a URL (postgres://user:password@host:port/database)")
        }
        guard scheme == "postgres" || scheme == "postgresql" else {
            throw bad("must start with postgres:// (was \(scheme)://)")
        }
        guard let host = components.host, !host.isEmpty else { throw bad("names no host") }
        guard let user = components.user, !user.isEmpty else { throw bad("names no user") }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty, !database.contains("/") else { throw bad("names no database (…/database)") }
        self.host = host
        self.port = components.port ?? 5432
        self.username = user.removingPercentEncoding ?? user
        self.password = components.password.map { $0.removingPercentEncoding ?? $0 }
        self.database = database.removingPercentEncoding ?? database
        var mode = "disable"
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else { throw bad("has an unknown parameter \(item.name)") }
            mode = item.value ?? ""
        }
        guard ["disable", "prefer", "require"].contains(mode) else {
            throw bad("sslmode must be disable, prefer or require (was \(mode))")
        }
        sslMode = mode
    }

    /// The URL with the password replaced by `***`.
    package var description: String {
        "postgres://\(username)\(password == nil ? "" : ":***")@\(host):\(port)/\(database)?sslmode=\(sslMode)"
    }

    /// The client configuration (connect timeout 5 s, at most ``maximumConnections``).
    package var clientConfiguration: PostgresClient.Configuration {
        let tls: PostgresClient.Configuration.TLS
        switch sslMode {
        case "require": tls = .require(.makeClientConfiguration())
        case "prefer": tls = .prefer(.makeClientConfiguration())
        default: tls = .disable
        }
        var configuration = PostgresClient.Configuration(
            host: host, port: port, username: username, password: password, database: database, tls: tls)
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.maximumConnections = maximumConnections
        return configuration
    }
}

extension PostgresSettings {
    /// Runs `body` with a running client on this database, migrated to this build's schema (``ExportSchema``); the
    /// client stops when `body` returns or throws. For the tools (`tollctl export`, `tollctl audit --export`).
    package func withMigratedClient<T: Sendable>(
        logger: Logger, _ body: @Sendable (PostgresClient) async throws -> T
    ) async throws -> T {
        let client = PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask {
                await client.run()
                return nil
            }
            defer { group.cancelAll() }
            try await ExportSchema.migrate(client, logger: logger)
            return try await body(client)
        }
    }
}
