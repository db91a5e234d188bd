import ArgumentParser
import Foundation
import Logging
import Pipeline
import Redis

/// Options shared by the `tollctl dead` subcommands, and their Redis connection.
struct DeadOptions: ParsableArguments {
    @Option(help: "The stream whose dead letters to use (jobs, verified).")
    var stream: String = "jobs"

    @Option(help: "Only this partition's stream (default: every partition of TOLLGATE_PARTITIONS).")
    var partition: Int?

    func validate() throws {
        guard Keys.knownStreams.contains(stream) else {
            throw ValidationError("--stream must be one of \(Keys.knownStreams.joined(separator: ", "))")
        }
        if let partition, !(0..<PartitionLayout.maximum).contains(partition) {
            throw ValidationError("--partition must be 0-\(PartitionLayout.maximum - 1)")
        }
    }

    /// Runs `body` with a connection, the keys (`TOLLGATE_REDIS_URL`, `TOLLGATE_KEY_PREFIX`, `TOLLGATE_PARTITIONS`) and
    /// the partitions chosen; a setting or Redis error ends the command (`tollctl: error: <code>: <message>`).
    func withRedis(_ body: (any RedisCommandExecutor, Keys, [Partition]) async throws -> Void) async throws {
        try await UserLedgerConnection.with(commandTimeout: .seconds(5)) { redis, keys in
            try await body(redis, keys, try UserLedgerConnection.partitions(partition, of: keys))
        }
    }
}
