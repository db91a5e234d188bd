extension RedisCommandExecutor {
    /// The servers that hold `keys`, each with how many of them it holds and an executor that reaches it: on a Redis
    /// Cluster every primary serving one of their slots (by a slot map read now); elsewhere this one server, holding
    /// them all. For startup checks that ask each server about itself (`CONFIG GET`, `INFO`).
    package func servers(holding keys: [String]) async throws -> [(name: String, keys: Int, redis: any RedisCommandExecutor)] {
        guard let cluster = self as? RedisClusterClient else { return [(name: "redis", keys: keys.count, redis: self)] }
        let map = try await cluster.refresh()
        var counts: [RedisConfiguration.Endpoint: Int] = [:]
        for key in keys {
            if let primary = map.primaries[ClusterKeySlot.slot(key)] { counts[primary, default: 0] += 1 }
        }
        return try counts.sorted { "\($0.key)" < "\($1.key)" }.map { primary, count in
            let connection: any RedisCommandExecutor = try cluster.connection(to: primary)
            return (name: "\(primary)", keys: count, redis: connection)
        }
    }
}
