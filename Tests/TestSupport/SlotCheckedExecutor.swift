import Redis

/// Runs commands on one redis-server but refuses, before sending, any command whose keys hash to different Redis
/// Cluster slots — what ``RedisClusterClient`` refuses (``RedisError/crossSlot(_:)``) — so that tests on one server
/// prove the partitioned layout never needs two slots in one command or Function call.
package struct SlotCheckedExecutor: RedisCommandExecutor {
    package let base: any RedisCommandExecutor

    package init(_ base: any RedisCommandExecutor) {
        self.base = base
    }

    package var commandTimeout: Duration { base.commandTimeout }

    package func send(_ command: RedisCommand, timeout: Duration?) async throws -> RedisReply {
        _ = try ClusterRoute.of(command)
        return try await base.send(command, timeout: timeout)
    }

    package func pipeline(_ commands: [RedisCommand]) async throws -> [RedisReply] {
        for command in commands { _ = try ClusterRoute.of(command) }
        return try await base.pipeline(commands)
    }
}
