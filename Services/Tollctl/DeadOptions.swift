import ArgumentParser
import Foundation
import Logging
import Pipeline
import Redis

/// Options shared by the `tollctl dead` subcommands, and their Redis connection.
struct DeadOptions: ParsableArguments {
    @Option(help: "The stream whose dead letters to use (jobs, verified).")
    var stream: String = "jobs"

    @Option(help: "The partition of the stream.")
    var partition: Int = 0

    func validate() throws {
        guard Keys.knownStreams.contains(stream) else {
            throw ValidationError("--stream must be one of \(Keys.knownStreams.joined(separator: ", "))")
        }
        guard (0...1023).contains(partition) else { throw ValidationError("--partition must be 0-1023") }
    }

    /// Runs `body` with a connection and the keys (`TOLLGATE_REDIS_URL`, `TOLLGATE_KEY_PREFIX`); a setting or
    /// Redis error ends the command (`tollctl: error: <code>: <message>`).
    func withRedis(_ body: (RedisConnection, Keys, StreamKeys) async throws -> Void) async throws {
        try await UserLedgerConnection.with(commandTimeout: .seconds(5)) { redis, keys in
            try await body(redis, keys, keys.stream(stream, partition: partition))
        }
    }
}
