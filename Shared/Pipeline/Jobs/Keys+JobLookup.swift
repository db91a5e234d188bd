package import Redis

/// Where a job's status was found (``Keys/locateJob(_:on:)``).
package struct JobLocation: Sendable, Hashable {
    /// The hash that holds the status reported.
    package var key: String
    /// Its fields.
    package var hash: [String: String]
    /// The job's home hash when the status reported is the one its event was moved to.
    package var movedFrom: String?

    package init(key: String, hash: [String: String], movedFrom: String? = nil) {
        self.key = key
        self.hash = hash
        self.movedFrom = movedFrom
    }

    /// The status those fields describe, if any.
    package func status(jobID: String) -> JobStatus? { JobStatus(jobID: jobID, hash: hash) }
}

extension JobStatus {
    /// The job hash field that names, when present, the partition the fulfiller moved the job's event to (the owner's
    /// partition; `hand_over`/`handed_over`, docs/CLUSTER.md §5 and §6): the hash of the same job id there
    /// (`tg:{K}:job:<id>`) holds its later status. Written in the hash of the partition the event left; an event moved
    /// again leaves a chain of them.
    package static let movedToField = Field.movedTo.rawValue

    /// How many `moved.to` pointers readers follow: one more than the fulfiller's bound on hand-overs of one entry
    /// (`LedgerDelivery.maximumMoves`, 4), so a chain it can write is always followed to its end.
    package static let maximumMoveHops = 5
}

extension Keys {
    /// Finds a job's status: its home hash (the partition its id names, ``partition(ofJob:)``); with more than one
    /// partition, for ids issued before the data was repartitioned, the legacy `tg:{p0}:job:<id>` when the home
    /// hash is absent. When the hash found names a partition in ``JobStatus/movedToField`` whose hash of the same id
    /// holds a status, that one is reported, and so on along the chain of hashes an event moved more than once
    /// leaves (at most ``JobStatus/maximumMoveHops``), with the home hash's `user` and `kind` where it has none. Nil when `jobID` is not a job id or no hash
    /// exists: a forged id naming a partition ≥ N is simply not found.
    package func locateJob(_ jobID: String, on redis: some RedisCommandExecutor) async throws -> JobLocation? {
        guard Self.isJobIDShaped(jobID) else { return nil }
        var candidates: [String] = []
        if let home = partition(ofJob: jobID) { candidates.append(job(jobID, partition: home)) }
        if !layout.isSingle { candidates.append(controlKey("job", jobID)) }
        for key in candidates {
            let hash = try await redis.hgetall(key)
            guard !hash.isEmpty else { continue }
            return try await following(jobID, from: JobLocation(key: key, hash: hash), on: redis)
        }
        return nil
    }

    /// Follows `moved.to` from `home` through at most ``JobStatus/maximumMoveHops`` hashes, each one the hash of
    /// the same id in the partition the previous one names, to the last one that holds a status. A pointer to a
    /// partition outside the layout, to a hash already visited, or to a hash without a status ends the walk there.
    private func following(
        _ jobID: String, from home: JobLocation, on redis: some RedisCommandExecutor
    ) async throws -> JobLocation {
        var current = home
        var visited: Set<String> = [home.key]
        for _ in 0..<JobStatus.maximumMoveHops {
            guard let moved = current.hash[JobStatus.movedToField].flatMap({ Int($0) }).flatMap({ layout.partition($0) })
            else { break }
            let movedKey = job(jobID, partition: moved)
            guard visited.insert(movedKey).inserted else { break }
            var movedHash = try await redis.hgetall(movedKey)
            guard JobStatus(jobID: jobID, hash: movedHash) != nil else { break }
            // Who submitted it, what it is and whose project it is stay the home hash's word when the moved one does
            // not say: they decide who may read the job (a notification's project is written where it was verified).
            for field in ["user", "kind", "project"] where movedHash[field] == nil { movedHash[field] = home.hash[field] }
            current = JobLocation(key: movedKey, hash: movedHash, movedFrom: home.key)
        }
        return current
    }

    /// The job's status as ``locateJob(_:on:)`` finds it.
    package func readJobStatus(_ jobID: String, on redis: some RedisCommandExecutor) async throws -> JobStatus? {
        try await locateJob(jobID, on: redis)?.status(jobID: jobID)
    }
}
