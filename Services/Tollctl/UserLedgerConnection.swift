import Foundation
import Logging
import Pipeline
import Redis

/// The Redis connection of tollctl's commands: reads `TOLLGATE_REDIS_URL` and `TOLLGATE_KEY_PREFIX`; a setting
/// or Redis error ends the command (`tollctl: error: <code>: <message>`).
enum UserLedgerConnection {
    static func with(
        commandTimeout: Duration = .seconds(10), _ body: (RedisConnection, Keys) async throws -> Void
    ) async throws {
        let shared = try SharedConfiguration(environment: ProcessInfo.processInfo.environment)
        let logger = Logger(label: "tollctl", factory: { _ in SwiftLogNoOpLogHandler() })
        let redis = try await shared.connectOne(clientName: "tollctl", logger: logger, commandTimeout: commandTimeout)
        defer { redis.close() }
        try await body(redis, shared.keys)
    }

    /// `HGETALL` as a dictionary.
    static func hash(_ redis: RedisConnection, _ key: String) async throws -> [String: String] {
        try await redis.hgetall(key)
    }
}
