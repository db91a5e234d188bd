import Logging
import Redis

extension StreamJanitor {
    /// Deletes the consumers of `stream`'s groups that hold no pending entries and have not read for
    /// `idleLimit`: every replica restart registers a new consumer name, and without this the groups collect
    /// them for ever. Deleting a consumer that holds nothing loses nothing; a live one that is deleted is
    /// registered again by its next read. Needs the pipeline functions loaded. Returns how many were deleted.
    @discardableResult
    package func pruneIdleConsumers(of stream: String, idleLimit: Duration) async throws -> Int {
        let groups: [StreamGroupInfo]
        do {
            groups = try await redis.xinfoGroups(stream)
        } catch RedisError.server(_, let message) where message.contains("no such key") {
            return 0
        }
        var deleted = 0
        for group in groups {
            let reply = try await redis.send(RedisCommand("XINFO", arguments: ["CONSUMERS", stream, group.name], keysAt: [1]))
            for consumer in reply.array ?? [] {
                let fields = consumer.array ?? []
                var values: [String: RedisReply] = [:]
                for index in stride(from: 0, to: fields.count - 1, by: 2) {
                    if let name = fields[index].string { values[name] = fields[index + 1] }
                }
                guard let name = values["name"]?.string, let pending = values["pending"]?.int,
                    let idle = values["idle"]?.int, pending == 0, idle >= idleLimit.milliseconds
                else { continue }
                // Checked again and deleted in one Function call: a consumer that read meanwhile is kept.
                guard
                    try await PipelineFunctions.pruneConsumer(
                        on: redis, stream: stream, group: group.name, consumer: name, idleLimit: idleLimit)
                else { continue }
                deleted += 1
            }
        }
        if deleted > 0 {
            logger.info("Pruned idle consumers", metadata: ["stream": "\(stream)", "count": "\(deleted)"])
        }
        return deleted
    }
}
