package import Redis

/// Runs commands on another executor but refuses, before sending, any command that fails one of its ``Checks``: what
/// a Redis Cluster would refuse or could route only by guesswork, caught by tests on one server.
package struct CheckedExecutor: RedisCommandExecutor {
    package struct Checks: OptionSet, Sendable {
        package let rawValue: Int
        package init(rawValue: Int) { self.rawValue = rawValue }

        /// Keys that hash to different Redis Cluster slots are refused — what ``RedisClusterClient`` refuses
        /// (``RedisError/crossSlot(_:)``) — so tests on one server prove the partitioned layout never needs two slots
        /// in one command or Function call. Declared keys (``RedisCommand/keyIndices``) must also be what
        /// ``ClusterRoute``'s table of command names finds, where the table knows the command, so a wrong key
        /// position in a helper fails these tests rather than routing a command to the wrong node of a cluster.
        package static let sameSlot = Checks(rawValue: 1)
        /// A command that does not declare its keys (declared empty for a command without keys) is refused: handed to
        /// the code under test (the ledger applier in ``LedgerHarness``), it fails a test whose path builds a command by
        /// name only, which a ``RedisClusterClient`` could route only by ``ClusterRoute``'s table of command names.
        package static let declaredKeys = Checks(rawValue: 2)
    }

    package let base: any RedisCommandExecutor
    package let checks: Checks

    package init(_ base: any RedisCommandExecutor, _ checks: Checks) {
        self.base = base
        self.checks = checks
    }

    package var commandTimeout: Duration { base.commandTimeout }

    package func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        try Self.check(command, checks)
        return try await base.send(command, timeout: timeout)
    }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        for command in commands { try Self.check(command, checks) }
        return try await base.pipeline(commands)
    }

    /// Throws ``RedisError/crossSlot(_:)`` for keys in two slots, and ``RedisError/protocolError(_:)`` for declared
    /// keys the table disagrees with (``Checks/sameSlot``) or for undeclared keys (``Checks/declaredKeys``).
    package static func check(_ command: RedisCommand, _ checks: Checks) throws {
        if checks.contains(.declaredKeys), command.keyIndices == nil {
            throw RedisError.protocolError("\(command.name) does not declare its keys")
        }
        guard checks.contains(.sameSlot) else { return }
        _ = try ClusterRoute.of(command)
        if let declared = command.declaredKeys, let table = ClusterRoute.tableKeys(of: command), declared != table {
            throw RedisError.protocolError("\(command.name) declares other keys than its key positions")
        }
    }
}
