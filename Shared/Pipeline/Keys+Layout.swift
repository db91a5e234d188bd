package import Redis

extension Keys {
    /// Records this deployment's partitions in ``layoutRecord`` when nothing is recorded yet, then checks that the
    /// record matches ``layout``: a process configured for other partitions than the data's would read and write
    /// keys nobody else uses. Data written before the record existed (a layout-1 deployment) counts as one
    /// partition, found by its `{p0}` streams.
    ///
    /// - Throws: ``PipelineError/layoutMismatch(configured:recorded:)``, or the Redis error.
    package func checkLayout(on redis: some RedisCommandExecutor) async throws {
        if let migrating = try await redis.send(RedisCommand("HGET", key: layoutRecord, "migrating")).string.flatMap({ Int($0) }) {
            throw PipelineError.layoutMigrating(partitions: migrating)
        }
        var recorded = try await recordedPartitions(on: redis)
        if recorded == nil {
            let legacy = ["jobs", "verified", "events"].map { controlKey($0) }
            if !layout.isSingle, (try await redis.send(RedisCommand("EXISTS", arguments: legacy, keysAt: legacy.indices)).int ?? 0) > 0 {
                recorded = 1
            } else {
                // HSETNX: of two processes starting at once, the first one's count is the record.
                _ = try await redis.send(RedisCommand("HSETNX", key: layoutRecord, "partitions", layout.count))
                _ = try await redis.send(RedisCommand("HSETNX", key: layoutRecord, "version", layout.version))
                recorded = try await recordedPartitions(on: redis)
            }
        }
        guard let recorded, recorded == layout.count else {
            throw PipelineError.layoutMismatch(configured: layout.count, recorded: recorded ?? 0)
        }
    }

    /// The partitions recorded in ``layoutRecord``, if any.
    package func recordedPartitions(on redis: some RedisCommandExecutor) async throws -> Int? {
        try await redis.send(RedisCommand("HGET", key: layoutRecord, "partitions")).string.flatMap { Int($0) }
    }
}
