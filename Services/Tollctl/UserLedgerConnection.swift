import Foundation
import Logging
import Pipeline
import Redis

/// The Redis connection of `tollctl user`, `job` and `audit`: reads `TOLLGATE_REDIS_URL` and
/// `TOLLGATE_KEY_PREFIX`, prints `error: <code>: <message>` and exits 1 on a configuration or Redis error.
enum UserLedgerConnection {
    static func with(_ body: (RedisConnection, Keys) async throws -> Void) async throws {
        do {
            let shared = try SharedConfiguration(environment: ProcessInfo.processInfo.environment)
            let logger = Logger(label: "tollctl", factory: { _ in SwiftLogNoOpLogHandler() })
            let redis = try await shared.connectOne(clientName: "tollctl", logger: logger, commandTimeout: .seconds(10))
            defer { redis.close() }
            try await body(redis, shared.keys)
        } catch let error as PipelineError {
            fail(code: error.code, message: error.message)
        } catch let error as RedisError {
            fail(code: error.code, message: error.description)
        }
    }

    /// `HGETALL` as a dictionary.
    static func hash(_ redis: RedisConnection, _ key: String) async throws -> [String: String] {
        try await redis.hgetall(key)
    }

    static func fail(code: String, message: String) -> Never {
        FileHandle.standardError.write(Data("error: \(code): \(message)\n".utf8))
        Foundation.exit(1)
    }
}
