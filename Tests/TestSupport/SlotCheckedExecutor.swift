package import Redis

/// Runs commands on one redis-server but refuses, before sending, any command whose keys hash to different Redis
/// Cluster slots — what ``RedisClusterClient`` refuses (``RedisError/crossSlot(_:)``) — so that tests on one server
/// prove the partitioned layout never needs two slots in one command or Function call. A command that declares its
/// keys (``RedisCommand/keyIndices``) must also declare what ``ClusterRoute``'s table of command names finds, where the
/// table knows the command, so a wrong key position in a helper fails these tests rather than routing a command to the
/// wrong node of a cluster.
package struct SlotCheckedExecutor: RedisCommandExecutor {
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

    /// Throws ``RedisError/crossSlot(_:)`` for keys in two slots, and ``RedisError/protocolError(_:)`` for declared
    /// keys the table disagrees with.
    package static func check(_ command: RedisCommand) throws {
        _ = try ClusterRoute.of(command)
        if let declared = command.declaredKeys, let table = ClusterRoute.tableKeys(of: command), declared != table {
            throw RedisError.protocolError("\(command.name) declares other keys than its key positions")
        }
    }
}
