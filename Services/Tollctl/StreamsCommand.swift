import ArgumentParser
import Foundation
import Logging
import Pipeline
import Redis

/// `tollctl streams`: per known stream, its length, each consumer group's pending count and lag, the retry
/// set size and the dead-letter count. Reads `TOLLGATE_REDIS_URL` and `TOLLGATE_KEY_PREFIX`.
struct StreamsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streams",
        abstract: "Show each stream's length, consumer groups (pending, lag), retries and dead letters."
    )

    @Option(help: "How many partitions to show (streams tg:{p0}… to tg:{pN-1}…).")
    var partitions: Int = 1

    func validate() throws {
        guard (1...1024).contains(partitions) else { throw ValidationError("--partitions must be 1-1024") }
    }

    func run() async throws {
        do {
            let shared = try SharedConfiguration(environment: ProcessInfo.processInfo.environment)
            let logger = Logger(label: "tollctl", factory: { _ in SwiftLogNoOpLogHandler() })
            let redis = try await shared.connectOne(clientName: "tollctl", logger: logger, commandTimeout: .seconds(2))
            defer { redis.close() }
            for partition in 0..<partitions {
                for name in Keys.knownStreams {
                    print(try await describe(shared.keys.stream(name, partition: partition), on: redis))
                }
            }
        } catch let error as PipelineError {
            fail(code: error.code, message: error.message)
        } catch let error as RedisError {
            fail(code: error.code, message: error.description)
        }
    }

    private func fail(code: String, message: String) -> Never {
        FileHandle.standardError.write(Data("error: \(code): \(message)\n".utf8))
        Foundation.exit(1)
    }

    private func describe(_ keys: StreamKeys, on redis: RedisConnection) async throws -> String {
        let length = try await redis.xlen(keys.stream)
        let retries = try await redis.send("ZCARD", keys.retry).int ?? 0
        let dead = try await redis.xlen(keys.deadLetter)
        var lines = ["\(keys.stream)  length=\(length)  retrying=\(retries)  dead-letters=\(dead) (\(keys.deadLetter))"]
        let groups: [StreamGroupInfo]
        do {
            groups = try await redis.xinfoGroups(keys.stream)
        } catch RedisError.server(_, let message) where message.contains("no such key") {
            groups = []
        }
        if groups.isEmpty { lines.append("  (no consumer groups)") }
        let lastEntry = groups.isEmpty ? nil : try await redis.lastEntryID(of: keys.stream)
        for group in groups {
            // Not Redis' raw `lag`, which Redis 7.0 overstates for good after a restart (see `undelivered`).
            let lag = group.undelivered(streamLength: length, lastEntry: lastEntry)
            lines.append("  group \(group.name)  consumers=\(group.consumers)  pending=\(group.pending)  lag=\(lag)")
        }
        return lines.joined(separator: "\n")
    }
}
