import ArgumentParser
import Foundation
import Pipeline
import Redis
import Webhooks

/// `tollctl webhooks list`: each endpoint (name, URL, how many secrets sign, type filter) and, over every partition,
/// its backlog: entries not finished (`pending`), waiting for a retry or their turn (`scheduled`), the oldest one's
/// age, and dead letters; then what its notifier replicas share: how many are alive and whether one has opened the
/// endpoint's breaker (`open(<seconds left>)`). Secrets are never printed.
struct WebhooksListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "list", abstract: "List endpoints and their backlog.")

    func run() async throws {
        let settings = try WebhooksOptions.settings()
        try await UserLedgerConnection.with { redis, keys in
            let now = Int64(Date().timeIntervalSince1970 * 1000)
            for endpoint in settings.endpoints {
                var pending = 0
                var scheduled = 0
                var dead = 0
                var oldest: Int64?
                for partition in keys.partitions {
                    let endpointKeys = keys.webhook(endpoint.name, partition: partition)
                    if let summary = try? await redis.xpendingSummary(endpointKeys.stream, group: endpoint.group) {
                        pending += summary.count
                        if let id = summary.smallestID, let ms = Int64(id.split(separator: "-").first ?? "") {
                            oldest = min(oldest ?? ms, ms)
                        }
                    }
                    scheduled += Int(try await redis.send(RedisCommand("ZCARD", key: endpointKeys.due)).int ?? 0)
                    dead += try await redis.xlen(endpointKeys.dead)
                }
                let fleet = keys.webhook(endpoint.name, partition: keys.partitions[0]).fleet
                let replicas = try await redis.send(RedisCommand("ZCARD", key: fleet.replicas)).int ?? 0
                let openUntil = try await redis.send(RedisCommand("GET", key: fleet.breaker)).string.flatMap { Int64($0) }
                let breaker = openUntil.flatMap { $0 > now ? "open(\(($0 - now + 999) / 1000)s)" : nil } ?? "closed"
                let types = endpoint.types.map { $0.sorted().joined(separator: ",") } ?? "*"
                print(
                    [
                        endpoint.name, endpoint.url.absoluteString, "secrets=\(endpoint.secrets.count)", "types=\(types)",
                        "pending=\(pending)", "scheduled=\(scheduled)",
                        "oldest=\(oldest.map { "\(max(0, now - $0) / 1000)s" } ?? "-")", "dead=\(dead)",
                        "replicas=\(replicas)", "breaker=\(breaker)",
                    ].joined(separator: "  "))
            }
        }
    }
}
