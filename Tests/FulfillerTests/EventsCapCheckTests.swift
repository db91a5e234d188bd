import Core
import Foundation
import Logging
import Pipeline
import Redis
import ServiceKit
import ServiceLifecycle
import TestSupport
import Testing

@testable import fulfiller

/// Issue 42 item 5: the events streams' cap (`TOLLGATE_EVENTS_MAX_MB` per partition) is compared at the fulfiller's
/// start with Redis's `maxmemory`, per server × the partitions on it: a cap that cannot fit stops the start where
/// `CONFIG GET` answers, and is a warning where it is refused.
@Suite(.timeLimit(.minutes(1)))
struct EventsCapCheckTests {
    static let megabyte = 1_048_576

    private func configuration(_ server: RedisServer, partitions: Int, capMB: Int) throws -> FulfillerConfiguration {
        var configuration = FulfillerConfiguration(
            shared: SharedConfiguration(
                redis: server.configuration(), keys: Keys(prefix: "tg", layout: try PartitionLayout(count: partitions))),
            catalog: testCatalog)
        configuration.metricsHost = "127.0.0.1"
        configuration.metricsPort = 0
        configuration.eventsBounds.maxBytes = capMB * Self.megabyte
        return configuration
    }

    private func setMaxmemory(_ server: RedisServer, _ value: String) async throws {
        let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
        try await redis.connect()
        defer { redis.close() }
        _ = try await redis.send("CONFIG", "SET", "maxmemory", value)
    }

    /// Builds the fulfiller and, when that works, runs it a moment and stops it.
    private func start(_ configuration: FulfillerConfiguration, logger: Logger = testLogger) async throws {
        let group = try await App.build(configuration: configuration, logger: logger, handlesSignals: false)
        let task = Task { try await group.run() }
        try await Task.sleep(for: .milliseconds(100))
        await group.triggerGracefulShutdown()
        try await task.value
    }

    @Test func aCapThatCannotFitInMaxmemoryStopsTheFulfillerAtStart() async throws {
        try await withRedisServer { server in
            try await setMaxmemory(server, "100mb")
            // 4 partitions × 30 MB is more than 100 MB.
            do {
                try await start(try configuration(server, partitions: 4, capMB: 30))
                Issue.record("the fulfiller started with 4 × 30 MB of events streams on a Redis of 100 MB")
            } catch let error as ConfigurationError {
                #expect(error.variable == "TOLLGATE_EVENTS_MAX_MB")
                #expect(error.problem.contains("30 MB per partition × 4 partitions"), "\(error.problem)")
            }
            // 4 × 20 MB fits.
            try await start(try configuration(server, partitions: 4, capMB: 20))
        }
    }

    @Test func whereCONFIGIsRefusedAMisfitIsAWarning() async throws {
        try await withRedisServer { server in
            try await setMaxmemory(server, "100mb")
            let redis = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await redis.connect()
            defer { redis.close() }
            // A managed Redis: CONFIG refused to the service's user; INFO still tells maxmemory.
            _ = try await redis.send("ACL", "SETUSER", "default", "-config")
            let lines = RecordedLines()
            try await start(
                try configuration(server, partitions: 1, capMB: 1024),
                logger: Logger(label: "check") { _ in RecordingLogHandler(sink: lines) })
            #expect(
                lines.all.contains { $0.message.contains("TOLLGATE_EVENTS_MAX_MB") && $0.message.contains("does not fit") },
                "\(lines.all.map(\.message))")
        }
    }
}
