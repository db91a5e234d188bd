import ArgumentParser
import Foundation
import Pipeline
import Redis

/// `tollctl dead list [--count N] [--partition P]`: the oldest dead letters of each partition's stream (every
/// partition holding any, or only `--partition`'s), under a header line per dead-letter stream, one line each: dead-letter id, job id, kind,
/// attempts, when, reason. Payloads (receipts, JWS) are never printed.
struct DeadListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List dead-lettered entries.")

    @OptionGroup var options: DeadOptions

    @Option(help: "How many entries to show (oldest first).")
    var count: Int = 20

    func validate() throws {
        guard (1...10_000).contains(count) else { throw ValidationError("--count must be 1-10000") }
    }

    func run() async throws {
        try await options.withRedis { redis, keys, partitions in
            for partition in partitions {
                let stream = keys.stream(options.stream, partition: partition)
                let total = try await redis.xlen(stream.deadLetter)
                // With several partitions, only those holding dead letters are listed.
                guard total > 0 || partitions.count == 1 else { continue }
                let entries = try await redis.xrange(stream.deadLetter, count: count)
                print("\(stream.deadLetter)  dead-letters=\(total)")
                for entry in entries {
                    print(Self.line(entry))
                }
            }
        }
    }

    /// One entry as a line of `name=value` pairs.
    static func line(_ entry: StreamEntry) -> String {
        let deadAt =
            entry.string("dead.at").flatMap { Int64($0) }.map {
                ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double($0) / 1000))
            } ?? "?"
        let reason = (entry.string("reason") ?? "").replacingOccurrences(of: "\n", with: " ")
        return [
            entry.id,
            "job=\(entry.string(Job.Field.id) ?? "-")",
            "kind=\(entry.string(Job.Field.kind) ?? "-")",
            "attempts=\(entry.string("attempts") ?? "?")",
            "dead.at=\(deadAt)",
            "reason=\(String(reason.prefix(200)))",
        ].joined(separator: "  ")
    }
}
