import Logging
package import Metrics
package import Redis
package import ServiceLifecycle

/// Exports a cluster client's counters (``Redis/RedisClusterClient/Counters``) as
/// `tollgate_redis_cluster_events_total{event}`: `moved`, `ask`, `tryagain`, `clusterdown`, `unreachable`, `refresh`,
/// `function_reload`. The client counts under its lock on the hot path; this service adds what changed every
/// `interval`, and once more when it stops, so a failover, a reshard or a lost node shows on `/metrics` within
/// seconds. ``SharedConfiguration/serviceGroup(services:handlesSignals:metrics:logger:)`` adds one for each cluster client in
/// a group (``exporters(for:)``).
package struct RedisClusterMetrics: Service {
    let client: RedisClusterClient
    let interval: Duration
    let factory: any MetricsFactory

    package init(client: RedisClusterClient, interval: Duration = .seconds(5), factory: any MetricsFactory = MetricsSystem.factory) {
        self.client = client
        self.interval = interval
        self.factory = factory
    }

    /// One exporter for each cluster client among `services`, to `factory`.
    package static func exporters(
        for services: [any Service], factory: any MetricsFactory = MetricsSystem.factory
    ) -> [any Service] {
        services.compactMap { $0 as? RedisClusterClient }.map { RedisClusterMetrics(client: $0, factory: factory) }
    }

    package func run() async throws {
        let client = client
        let interval = interval
        let exporter = self
        let exported = await cancelWhenGracefulShutdown {
            var exported = RedisClusterClient.Counters()
            while !Task.isCancelled {
                exported = exporter.export(client.counters, since: exported)
                try? await Task.sleep(for: interval)
            }
            return exported
        }
        _ = export(client.counters, since: exported)
    }

    /// Adds `now − before` to each event's counter; returns `now`, what has been exported.
    @discardableResult
    package func export(_ now: RedisClusterClient.Counters, since before: RedisClusterClient.Counters) -> RedisClusterClient.Counters {
        let events: [(String, Int, Int)] = [
            ("moved", now.moved, before.moved), ("ask", now.ask, before.ask),
            ("tryagain", now.tryAgain, before.tryAgain), ("clusterdown", now.clusterDown, before.clusterDown),
            ("unreachable", now.unreachable, before.unreachable), ("refresh", now.refreshes, before.refreshes),
            ("function_reload", now.functionReloads, before.functionReloads),
        ]
        for (event, current, exported) in events where current > exported {
            Counter(label: "tollgate_redis_cluster_events_total", dimensions: [("event", event)], factory: factory)
                .increment(by: current - exported)
        }
        return now
    }
}
