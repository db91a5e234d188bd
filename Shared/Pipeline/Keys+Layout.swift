package import Redis

extension Keys {
    /// Records this deployment's partitions in ``layoutRecord`` when nothing is recorded yet, then checks that the
    /// record matches ``layout``: a process configured for other partitions than the data's would read and write
    /// keys nobody else uses. Data written before the record existed (a layout-1 deployment) counts as one
    /// partition, found by its `{p0}` streams.
    ///
    /// Then the stored data's version (``StoredData``, the record's `data` field): on an empty Redis (no record, no
    /// `{p0}` streams) the process records the current version itself, before the partitions, so a record with
    /// partitions and no version is always older data (written by a release before 0.9.0), as are `{p0}` streams
    /// without a record; such data, or data of a lower version, is refused until `tollctl upgrade` raised it.
    ///
    /// - Throws: ``PipelineError/layoutMismatch(configured:recorded:)``,
    ///   ``PipelineError/dataUpgradeRequired(stored:current:)``, or the Redis error.
    package func checkLayout(on redis: some RedisCommandExecutor) async throws {
        if let migrating = try await redis.send(RedisCommand("HGET", key: layoutRecord, "migrating")).string.flatMap({ Int($0) }) {
            throw PipelineError.layoutMigrating(partitions: migrating)
        }
        var recorded = try await recordedPartitions(on: redis)
        if recorded == nil {
            let older = try await holdsUnrecordedData(on: redis)
            if older, !layout.isSingle {
                recorded = 1
            } else {
                // HSETNX: of two processes starting at once, the first one's count is the record. The data version
                // first, and only on an empty Redis: whoever then sees partitions also sees a version.
                if !older {
                    _ = try await redis.send(RedisCommand("HSETNX", key: layoutRecord, StoredData.field, StoredData.version))
                }
                _ = try await redis.send(RedisCommand("HSETNX", key: layoutRecord, "partitions", layout.count))
                _ = try await redis.send(RedisCommand("HSETNX", key: layoutRecord, "version", layout.version))
                recorded = try await recordedPartitions(on: redis)
            }
        }
        guard let recorded, recorded == layout.count else {
            throw PipelineError.layoutMismatch(configured: layout.count, recorded: recorded ?? 0)
        }
        let stored = try await storedDataVersion(on: redis) ?? 0
        guard stored >= StoredData.version else {
            throw PipelineError.dataUpgradeRequired(stored: stored, current: StoredData.version)
        }
    }

    /// The partitions recorded in ``layoutRecord``, if any.
    package func recordedPartitions(on redis: some RedisCommandExecutor) async throws -> Int? {
        try await redis.send(RedisCommand("HGET", key: layoutRecord, "partitions")).string.flatMap { Int($0) }
    }

    /// The data version recorded in ``layoutRecord`` (``StoredData``), if any.
    package func storedDataVersion(on redis: some RedisCommandExecutor) async throws -> Int? {
        try await redis.send(RedisCommand("HGET", key: layoutRecord, StoredData.field)).string.flatMap { Int($0) }
    }

    /// Whether Redis holds data of a layout-1 deployment that predates the layout record: its `{p0}` streams.
    package func holdsUnrecordedData(on redis: some RedisCommandExecutor) async throws -> Bool {
        let legacy = Self.knownStreams.map { controlKey($0) }
        return (try await redis.send(RedisCommand("EXISTS", arguments: legacy, keysAt: legacy.indices)).int ?? 0) > 0
    }
}
