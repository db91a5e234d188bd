import ArgumentParser
import Foundation
import Pipeline
import Redis

/// `tollctl dead list [--count N]`: the oldest dead letters, one line each: dead-letter id, job id, kind,
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
        try await options.withRedis { redis, _, keys in
            let total = try await redis.xlen(keys.deadLetter)
            let entries = try await redis.xrange(keys.deadLetter, count: count)
            print("\(keys.deadLetter)  dead-letters=\(total)")
            for entry in entries {
                print(Self.line(entry))
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
