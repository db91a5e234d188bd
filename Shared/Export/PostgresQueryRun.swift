import Logging
package import PostgresNIO

extension PostgresClient {
    /// Runs `query` to its end. postgres-nio reports an error PostgreSQL raises while executing a statement (a value
    /// a cast refuses, a constraint) only to a reader of its rows: a statement whose rows nobody reads could fail
    /// unseen, and its entry be acknowledged as written. Every write goes through here.
    package func perform(_ query: PostgresQuery, logger: Logger) async throws {
        _ = try await self.query(query, logger: logger).collect()
    }
}

extension PostgresConnection {
    /// Runs `query` to its end (see ``PostgresNIO/PostgresClient/perform(_:logger:)``).
    package func perform(_ query: PostgresQuery, logger: Logger) async throws {
        _ = try await self.query(query, logger: logger).collect()
    }
}
