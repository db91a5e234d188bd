import ArgumentParser
import Foundation
import Redis
import Webhooks

/// `tollctl webhooks dead [--endpoint NAME] [--count N]`: the endpoint's oldest dead letters per partition, one line
/// each: dead-letter id, event id, user, seq, attempts, when, reason. Event bodies are not printed.
struct WebhooksDeadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dead", abstract: "List an endpoint's dead letters.")

    @OptionGroup var options: WebhooksOptions

    @Option(help: "How many entries to show per partition (oldest first).")
    var count: Int = 20

    func run() async throws {
        let endpoint = try options.chosen(in: try WebhooksOptions.settings())
        try await options.withRedis { redis, keys, partitions in
            let letters = WebhookDeadLetters(redis: redis, keys: keys)
            for (endpointKeys, total, entries) in try await letters.list(endpoint.name, partitions: partitions, count: count)
            where total > 0 || partitions.count == 1 {
                print("\(endpointKeys.dead)  dead-letters=\(total)")
                for entry in entries {
                    let deadAt = entry.string("dead.at").flatMap { Int64($0) }.map {
                        ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: Double($0) / 1000))
                    }
                    print(
                        [
                            entry.id, "event=\(entry.string("event.id") ?? "-")", "user=\(entry.string("user") ?? "-")",
                            "seq=\(entry.string("seq") ?? "-")", "attempts=\(entry.string("attempts") ?? "?")",
                            "dead.at=\(deadAt ?? "?")", "reason=\(String((entry.string("reason") ?? "").prefix(200)))",
                        ].joined(separator: "  "))
                }
            }
        }
    }
}
