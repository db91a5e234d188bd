package import Pipeline
package import Redis

/// One endpoint's dead letters (every partition's `tg:{pN}:webhook:<endpoint>:dead`): listed, redriven and purged by
/// `tollctl webhooks dead|redrive|purge`. A dead letter is the events-stream entry's fields plus `source.id` (the entry),
/// `reason`, `attempts` and `dead.at` (ms).
package struct WebhookDeadLetters: Sendable {
    /// What a redrive did.
    package struct Redrive: Sendable, Hashable {
        package var delivered = 0
        package var failed = 0
        /// Dead letters that are not readable events (left in place).
        package var unreadable = 0

        package init(delivered: Int = 0, failed: Int = 0, unreadable: Int = 0) {
            self.delivered = delivered
            self.failed = failed
            self.unreadable = unreadable
        }
    }

    let redis: any RedisCommandExecutor
    let keys: Keys

    package init(redis: any RedisCommandExecutor, keys: Keys) {
        self.redis = redis
        self.keys = keys
    }

    /// Up to `count` dead letters of `endpoint` in each of `partitions`, oldest first, with each partition's total.
    package func list(
        _ endpoint: String, partitions: [Partition], count: Int
    ) async throws -> [(keys: WebhookKeys, total: Int, entries: [StreamEntry])] {
        var result: [(keys: WebhookKeys, total: Int, entries: [StreamEntry])] = []
        for partition in partitions {
            let endpointKeys = keys.webhook(endpoint, partition: partition)
            let total = try await redis.xlen(endpointKeys.dead)
            result.append((endpointKeys, total, total == 0 ? [] : try await redis.xrange(endpointKeys.dead, count: count)))
        }
        return result
    }

    /// Sends up to `limit` dead letters of `endpoint` again, oldest first (only `id` when given), each signed now;
    /// a 2xx deletes the dead letter, anything else leaves it. The endpoint's cursor moved on when the event died,
    /// so a redriven event arrives after the user's later ones: receivers deduplicate by the body's `id` (never the
    /// unsigned `Tollgate-Event-Id` header) and take it as late.
    package func redrive(
        _ endpoint: WebhookEndpoint, partitions: [Partition], sender: WebhookSender, now: @Sendable () -> Int64, limit: Int,
        id: String? = nil
    ) async throws -> Redrive {
        var outcome = Redrive()
        for partition in partitions {
            let dead = keys.webhook(endpoint.name, partition: partition).dead
            let entries =
                if let id { try await redis.xrange(dead, start: id, end: id, count: 1) } else {
                    try await redis.xrange(dead, count: limit)
                }
            for entry in entries.prefix(max(0, limit - outcome.delivered - outcome.failed)) {
                let source = StreamEntry(id: entry.string("source.id") ?? entry.id, fields: entry.fields)
                guard let event = WebhookEvent(entry: source) else {
                    outcome.unreadable += 1
                    continue
                }
                let attempt = try await sender.send(
                    body: event.body, eventID: event.eventID, to: endpoint, timestamp: now() / 1000)
                if case .delivered = attempt {
                    _ = try await redis.send(RedisCommand("XDEL", key: dead, entry.id))
                    outcome.delivered += 1
                } else {
                    outcome.failed += 1
                }
            }
        }
        return outcome
    }

    /// Deletes every dead letter of `endpoint` (a name, configured or not) in each of `partitions`; returns how many
    /// there were.
    package func purge(_ endpoint: String, partitions: [Partition]) async throws -> Int {
        var purged = 0
        for partition in partitions {
            let dead = keys.webhook(endpoint, partition: partition).dead
            purged += try await redis.xlen(dead)
            _ = try await redis.send(RedisCommand("DEL", key: dead))
        }
        return purged
    }
}
