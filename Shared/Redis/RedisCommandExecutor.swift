/// Anything that can run commands: a ``RedisPool``, or one dedicated ``RedisConnection``.
package protocol RedisCommandExecutor: Sendable {
    /// Runs one command. Error replies are thrown as ``RedisError/server(code:message:)``.
    ///
    /// `timeout` overrides the socket timeout for this call only (blocking reads need one longer than their
    /// BLOCK); `.zero` waits forever.
    func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply

    /// Appends all commands, then reads all replies, in one round trip. Error replies are returned in place
    /// as `.error` (not thrown); I/O failures throw (``RedisError/unknownOutcome(_:)`` once anything was sent).
    func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply]

    /// The configured per-command timeout; blocking helpers add it to their BLOCK time.
    var commandTimeout: Duration { get }
}

extension RedisCommandExecutor {
    package var commandTimeout: Duration { .seconds(5) }

    /// Runs one command with the configured command timeout.
    package func send(_ command: RedisCommand) async throws -> RedisReply {
        try await send(command, timeout: nil)
    }

    /// Runs `name key rest…` (one key, the first argument) with the configured command timeout.
    package func send(
        _ name: String, key: any RedisArgumentConvertible, _ rest: any RedisArgumentConvertible...
    ) async throws -> RedisReply {
        try await send(RedisCommand(name, arguments: [key] + rest, keysAt: [0]), timeout: nil)
    }

    /// Runs `name arguments…` with the configured command timeout: a command without keys, or one whose keys a Redis
    /// Cluster client finds by name only (a test's, an operator's); Tollgate's own commands declare theirs.
    package func send(_ name: String, _ arguments: any RedisArgumentConvertible...) async throws -> RedisReply {
        try await send(RedisCommand(name, arguments: arguments), timeout: nil)
    }
}
