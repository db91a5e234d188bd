import Foundation
import Pipeline
import Redis
import TestSupport

/// The Redis a test system runs on: one `redis-server`, or — with `TOLLGATE_TEST_REDIS=cluster` — a 6-node Redis
/// Cluster (3 primaries, 3 replicas) with the services on 16 partitions.
enum SystemRedis: Sendable {
    case server(RedisServer)
    case cluster(RedisCluster)

    /// The partitions the services run with on a cluster.
    static let clusterPartitions = 16

    /// Whether the end-to-end tests run on a cluster (`TOLLGATE_TEST_REDIS=cluster`).
    static var onCluster: Bool { ProcessInfo.processInfo.environment["TOLLGATE_TEST_REDIS"] == "cluster" }

    static func start() async throws -> SystemRedis {
        onCluster ? .cluster(try await RedisCluster.start()) : .server(try await RedisServer.start())
    }

    /// `TOLLGATE_REDIS_URL` (every node of a cluster as a seed) and, on a cluster, `TOLLGATE_PARTITIONS`.
    var environment: [String: String] {
        switch self {
        case .server(let server): ["TOLLGATE_REDIS_URL": server.url]
        case .cluster(let cluster): ["TOLLGATE_REDIS_URL": cluster.url, "TOLLGATE_PARTITIONS": String(Self.clusterPartitions)]
        }
    }

    /// The services' keys.
    var keys: Keys {
        switch self {
        case .server: Keys(prefix: "tg")
        case .cluster: Keys(prefix: "tg", layout: (try? PartitionLayout(count: Self.clusterPartitions)) ?? .single)
        }
    }

    /// Runs `body` with a client of this Redis (a cluster client on a cluster), closed afterwards.
    func withClient<T>(_ body: (any RedisCommandExecutor) async throws -> T) async throws -> T {
        switch self {
        case .server(let server):
            let connection = RedisConnection(configuration: server.configuration(), logger: testLogger)
            try await connection.connect()
            defer { connection.close() }
            return try await body(connection)
        case .cluster(let cluster):
            let client = try await cluster.connectedClient()
            defer { client.close() }
            return try await body(client)
        }
    }

    /// Every entry of the stream `name` (`jobs`, `events`, …) in every partition.
    func entries(of name: String) async throws -> [StreamEntry] {
        let keys = keys
        return try await withClient { redis in
            var all: [StreamEntry] = []
            for partition in keys.partitions { all += try await redis.xrange(keys.stream(name, partition: partition).stream) }
            return all
        }
    }

    func shutdown() async {
        switch self {
        case .server(let server): await server.shutdown()
        case .cluster(let cluster): await cluster.shutdown()
        }
    }
}
