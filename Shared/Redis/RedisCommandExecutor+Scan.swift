extension RedisCommandExecutor {
    /// Hands every key matching `pattern` to `body`, a `SCAN` batch at a time: on one server, or on every primary of
    /// a Redis Cluster (``RedisClusterClient``: a `SCAN` reaches one node only). A key may be handed more than once
    /// (SCAN's guarantee), so `body` must not mind repeats.
    package func scanKeys(match pattern: String, count: Int = 500, _ body: ([String]) async throws -> Void) async throws {
        if let cluster = self as? RedisClusterClient {
            for node in try await cluster.primaryEndpoints() {
                try await Self.scan(on: try cluster.connection(to: node), match: pattern, count: count, body)
            }
        } else {
            try await Self.scan(on: self, match: pattern, count: count, body)
        }
    }

    private static func scan(
        on redis: some RedisCommandExecutor, match pattern: String, count: Int, _ body: ([String]) async throws -> Void
    ) async throws {
        var cursor = "0"
        repeat {
            let reply = try await redis.send(RedisCommand("SCAN", arguments: [cursor, "MATCH", pattern, "COUNT", count], keysAt: []))
            guard let parts = reply.array, parts.count == 2, let next = parts[0].string, let found = parts[1].array else {
                throw RedisError.protocolError("SCAN returned \(reply)")
            }
            cursor = next
            try await body(found.compactMap(\.string))
        } while cursor != "0"
    }
}

extension RedisClusterClient {
    /// Every primary serving slots, by a slot map read now (a failover since the last read moved a primary, and a
    /// SCAN of a demoted node could miss what its new primary took since).
    package func primaryEndpoints() async throws -> [Endpoint] {
        try await refresh().allPrimaries
    }
}
