import Redis

extension StreamGroupInfo {
    /// Entries this group has not been delivered: none when its last-delivered id is at the stream's last
    /// entry (or the stream is empty), else its `lag` capped by the stream's length.
    ///
    /// `lag` is not trusted alone: Redis 7.0 does not carry a group's `entries-read` through the AOF or to
    /// replicas, so after a restart (or on a replica after a full sync) the lag stays too high by every entry
    /// delivered since the last AOF rewrite or full sync, for good. `XLEN` always counts every undelivered
    /// entry (the janitor trims only below them).
    package func undelivered(streamLength length: Int, lastEntry: StreamID?) -> Int {
        guard let lastEntry, length > 0 else { return 0 }
        if let delivered = StreamID(lastDeliveredID), delivered >= lastEntry { return 0 }
        return Swift.min(lag ?? length, length)
    }
}

extension RedisCommandExecutor {
    /// The id of `stream`'s last entry (`XREVRANGE stream + - COUNT 1`), nil when it is empty or missing.
    package func lastEntryID(of stream: String) async throws -> StreamID? {
        let last = try await send(RedisCommand("XREVRANGE", key: stream, "+", "-", "COUNT", 1))
        return last.array?.first?.array?.first?.string.flatMap(StreamID.init)
    }
}
