import ArgumentParser
import Foundation
import Pipeline
import Redis

/// `tollctl streams`: per known stream of every partition (or `--partition`'s), its length, each consumer group's pending count and lag, the retry
/// set size and the dead-letter count, as text or (`--json`) as one JSON object for scripts and tests. Reads
/// `TOLLGATE_REDIS_URL` and `TOLLGATE_KEY_PREFIX`.
struct StreamsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streams",
        abstract: "Show each stream's length, consumer groups (pending, lag), retries and dead letters."
    )

    @Option(help: "Show only this partition's streams (default: every partition of TOLLGATE_PARTITIONS).")
    var partition: Int?

    @Flag(
        help:
            "One JSON object: {\"streams\": [{\"name\", \"partition\", \"stream\", \"length\", \"retrying\", \"deadLetters\", \"groups\": [{\"name\", \"consumers\", \"pending\", \"lag\"}]}]}."
    )
    var json = false

    func run() async throws {
        try await UserLedgerConnection.with(commandTimeout: .seconds(2)) { redis, keys in
            var report = StreamsReport(streams: [])
            for partition in try UserLedgerConnection.partitions(self.partition, of: keys) {
                for name in Keys.knownStreams {
                    report.streams.append(
                        try await Self.describe(
                            name: name, partition: partition, keys: keys.stream(name, partition: partition), on: redis))
                }
            }
            if json {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                print(String(decoding: try encoder.encode(report), as: UTF8.self))
            } else {
                for stream in report.streams { print(stream.text) }
            }
        }
    }

    static func describe(
        name: String, partition: Partition, keys: StreamKeys, on redis: any RedisCommandExecutor
    ) async throws -> StreamsReport.Stream {
        let length = try await redis.xlen(keys.stream)
        let retries = try await redis.send("ZCARD", key: keys.retry).int ?? 0
        let dead = try await redis.xlen(keys.deadLetter)
        let groups: [StreamGroupInfo]
        do {
            groups = try await redis.xinfoGroups(keys.stream)
        } catch RedisError.server(_, let message) where message.contains("no such key") {
            groups = []
        }
        let lastEntry = groups.isEmpty ? nil : try await redis.lastEntryID(of: keys.stream)
        return StreamsReport.Stream(
            name: name, partition: partition.index, stream: keys.stream, length: length, retrying: retries, deadLetters: dead,
            deadLetterStream: keys.deadLetter,
            groups: groups.map { group in
                // Not Redis' raw `lag`, which Redis 7.0 overstates for good after a restart (see `undelivered`).
                .init(
                    name: group.name, consumers: group.consumers, pending: group.pending,
                    lag: group.undelivered(streamLength: length, lastEntry: lastEntry))
            })
    }
}

/// What `tollctl streams` reports (the `--json` shape).
struct StreamsReport: Codable {
    struct Group: Codable {
        var name: String
        var consumers: Int
        var pending: Int
        var lag: Int
    }

    struct Stream: Codable {
        var name: String
        var partition: Int
        var stream: String
        var length: Int
        var retrying: Int64
        var deadLetters: Int
        var deadLetterStream: String
        var groups: [Group]

        var text: String {
            var lines = ["\(stream)  length=\(length)  retrying=\(retrying)  dead-letters=\(deadLetters) (\(deadLetterStream))"]
            if groups.isEmpty { lines.append("  (no consumer groups)") }
            for group in groups {
                lines.append("  group \(group.name)  consumers=\(group.consumers)  pending=\(group.pending)  lag=\(group.lag)")
            }
            return lines.joined(separator: "\n")
        }
    }

    var streams: [Stream]
}
