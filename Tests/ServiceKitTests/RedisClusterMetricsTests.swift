import Prometheus
import Redis
import ServiceKit
import TestSupport
import Testing

/// The cluster client's redirects and refreshes on `/metrics`, on a real 6-node Redis Cluster.
@Suite("Redis Cluster metrics", .serialized)
struct RedisClusterMetricsTests {
    @Test func redirectsAndRefreshesAreExportedOnceEach() async throws {
        try await withRedisCluster { cluster in
            let client = try await cluster.connectedClient()
            defer { client.close() }
            let registry = PrometheusCollectorRegistry()
            let exporter = RedisClusterMetrics(
                client: client, interval: .milliseconds(20), factory: PrometheusMetricsFactory(registry: registry))
            let running = Task { try await exporter.run() }
            defer { running.cancel() }
            let refreshes = client.counters.refreshes
            #expect(refreshes >= 1)
            #expect(await Self.exported(registry, "refresh", toReach: { client.counters.refreshes }) == client.counters.refreshes)

            // The slot of an empty key moved to another primary behind the client's back: one MOVED.
            let slot = ClusterKeySlot.slot("metrics-key")
            let owner = try #require(client.slotMap.primaries[slot])
            let target = try #require(client.slotMap.allPrimaries.first { $0 != owner })
            let targetID = try #require(try await cluster.send(to: target.port, "CLUSTER", "MYID").string)
            for primary in client.slotMap.allPrimaries {
                _ = try await cluster.send(to: primary.port, "CLUSTER", "SETSLOT", slot, "NODE", targetID)
            }
            #expect(try await client.send("SET", "metrics-key", "v") == .status("OK"))
            #expect(client.counters.moved == 1)
            #expect(await Self.exported(registry, "moved", toReach: { 1 }) == 1)
            // Exported as deltas: more rounds add nothing.
            try await Task.sleep(for: .milliseconds(100))
            #expect(await Self.exported(registry, "moved", toReach: { 1 }) == 1)
            #expect(await Self.exported(registry, "refresh", toReach: { client.counters.refreshes }) == client.counters.refreshes)
        }
    }

    /// The exported value of `event` once it equals `expected()` (the exporter caught up with the client), or the
    /// last one seen after 5 s (nil when it never appears).
    static func exported(
        _ registry: PrometheusCollectorRegistry, _ event: String, toReach expected: @escaping @Sendable () -> Int
    ) async -> Int? {
        let prefix = "tollgate_redis_cluster_events_total{event=\"\(event)\"} "
        var value: Int?
        _ = await eventually(timeout: .seconds(5)) {
            let text = String(decoding: registry.emitToBuffer(), as: UTF8.self)
            value = text.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Int($0.dropFirst(prefix.count)) }
            return value == expected()
        }
        return value
    }
}
