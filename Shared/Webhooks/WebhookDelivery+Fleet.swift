import Logging
import Redis
import Synchronization

/// What an endpoint's replicas share (Services/Notifier/README.md, "How delivery works"): each replica takes its share
/// of the endpoint's concurrency and adopts a breaker opening another replica published, through the notifier
/// library's `fleet` call.
extension WebhookDelivery {
    /// What a replica knows of the endpoint's replicas: how many are alive, when it last asked, and the latest breaker
    /// opening it published or adopted.
    struct FleetView {
        var replicas = 1
        var syncedAt: Int64?
        var published: Int64 = 0
    }

    /// Tells the endpoint's other replicas that this one is alive, and publishes its breaker's opening when it is
    /// later than any published; learns how many replicas share the concurrency and adopts an opening another
    /// published (``NotifierFunctions/fleet(on:keys:consumer:now:ttl:openUntil:)``). Every `fleetInterval`, or at once
    /// when this replica's breaker has opened; a Redis fault keeps what was known until the next interval.
    func syncFleet(now: Int64) async {
        let open = breaker.withLock { $0.openUntil }
        let (due, publish): (Bool, Int64?) = fleet.withLock { view in
            let publish = open.flatMap { $0 > view.published ? $0 : nil }
            let stale = view.syncedAt.map { now - $0 >= configuration.fleetInterval.milliseconds } ?? true
            return (publish != nil || stale, publish)
        }
        guard due, let first = keys.first else { return }
        do {
            let answer = try await NotifierFunctions.fleet(
                on: redis, keys: first.fleet, consumer: consumer, now: now, ttl: configuration.lease, openUntil: publish)
            fleet.withLock { view in
                view.replicas = answer.replicas
                view.syncedAt = now
                view.published = max(view.published, publish ?? 0, answer.openUntil ?? 0)
            }
            if let until = answer.openUntil {
                let open = breaker.withLock { breaker in
                    breaker.adopt(openUntil: until, now: now)
                    return breaker.isOpen
                }
                metrics.breaker(endpoint.name, open: open)
            }
            metrics.replicas(endpoint.name, answer.replicas)
        } catch {
            fleet.withLock { $0.syncedAt = now }
            logger.warning("Webhook fleet step failed", metadata: ["error": "\(error)"])
        }
    }
}
