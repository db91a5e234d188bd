import Foundation
import Logging
import Pipeline
import Redis
import ServiceKit

/// The Redis connection of tollctl's commands: reads `TOLLGATE_REDIS_URL`, `TOLLGATE_KEY_PREFIX` and
/// `TOLLGATE_PARTITIONS` (refused with `layout_mismatch` when Redis records other partitions); a setting or Redis
/// error ends the command (`tollctl: error: <code>: <message>`).
enum UserLedgerConnection {
    static func with(
        commandTimeout: Duration = .seconds(10), _ body: (any RedisCommandExecutor, Keys) async throws -> Void
    ) async throws {
        let shared = try SharedConfiguration(environment: ProcessInfo.processInfo.environment)
        let logger = Logger(label: "tollctl", factory: { _ in SwiftLogNoOpLogHandler() })
        // One connection on one server; the cluster client (each command to its slot's primary, SCAN on every
        // primary) on a Redis Cluster.
        let redis = try await shared.connectTool(clientName: "tollctl", logger: logger, commandTimeout: commandTimeout)
        defer { redis.close() }
        // Read only: a command configured for other partitions than the data's would read keys nobody writes.
        if let recorded = try await shared.keys.recordedPartitions(on: redis), recorded != shared.keys.layout.count {
            throw ToolError(
                "layout_mismatch",
                "TOLLGATE_PARTITIONS is \(shared.keys.layout.count) but the data is recorded with \(recorded) partitions "
                    + "(\(shared.keys.layoutRecord))")
        }
        try await body(redis, shared.keys)
    }

    /// The partitions a command covers: `only` when given (`invalid_partition` unless the layout has it), else
    /// every partition of the layout.
    static func partitions(_ only: Int?, of keys: Keys) throws -> [Partition] {
        guard let only else { return keys.partitions }
        guard let partition = keys.layout.partition(only) else {
            throw ToolError(
                "invalid_partition", "partition \(only) is not one of the \(keys.layout.count) (TOLLGATE_PARTITIONS) of this layout")
        }
        return [partition]
    }

    /// `HGETALL` as a dictionary.
    static func hash(_ redis: any RedisCommandExecutor, _ key: String) async throws -> [String: String] {
        try await redis.hgetall(key)
    }
}
