package import Redis

/// Runs commands on another executor but refuses, before sending, any command that does not declare its keys
/// (``RedisCommand/keyIndices``; declared empty for a command without keys): handed to the code under test (the
/// ledger applier in ``LedgerHarness``), it fails a test whose path builds a command by name only, which a
/// ``RedisClusterClient`` could route only by ``ClusterRoute``'s table of command names.
package struct DeclaredKeysExecutor: RedisCommandExecutor {
    package let base: any RedisCommandExecutor

    package init(_ base: any RedisCommandExecutor) {
        self.base = base
    }

    package var commandTimeout: Duration { base.commandTimeout }

    package func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        try Self.check(command)
        return try await base.send(command, timeout: timeout)
    }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        for command in commands { try Self.check(command) }
        return try await base.pipeline(commands)
    }

    /// Throws ``RedisError/protocolError(_:)`` for a command without declared keys.
    package static func check(_ command: RedisCommand) throws {
        guard command.keyIndices != nil else {
            throw RedisError.protocolError("\(command.name) does not declare its keys")
        }
    }
}
