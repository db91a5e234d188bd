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

    /// Runs `body` with a connection and the keys, printing `error: <code>: <message>` and exiting 1 on a
    /// configuration or Redis error. Reads `TOLLGATE_REDIS_URL` and `TOLLGATE_KEY_PREFIX`.
    func withRedis(_ body: (RedisConnection, Keys, StreamKeys) async throws -> Void) async throws {
        do {
            let shared = try SharedConfiguration(environment: ProcessInfo.processInfo.environment)
            let logger = Logger(label: "tollctl", factory: { _ in SwiftLogNoOpLogHandler() })
            let redis = try await shared.connectOne(clientName: "tollctl", logger: logger, commandTimeout: .seconds(5))
            defer { redis.close() }
            try await body(redis, shared.keys, shared.keys.stream(stream, partition: partition))
        } catch let error as PipelineError {
            Self.fail(code: error.code, message: error.message)
        } catch let error as RedisError {
            Self.fail(code: error.code, message: error.description)
        }
    }

    static func fail(code: String, message: String) -> Never {
        FileHandle.standardError.write(Data("error: \(code): \(message)\n".utf8))
        Foundation.exit(1)
    }
}
