import Foundation
package import Logging
package import Pipeline
package import Redis
import ServiceLifecycle
import Synchronization

/// Delivers one endpoint's events from every partition's events stream (consumer group `webhook:<name>`), with any
/// number of replicas (Services/Notifier/README.md, "How delivery works"). One loop goes round the partitions: one
/// `pull` per partition reads new entries into the endpoint's schedule (`due`) and takes those due, each through its
/// subject's cursor and lease, and each taken entry is delivered in its own task — at most `concurrency` at once, one
/// probe while the breaker is half open, none while it is open. A delivery posts and ends with `finish` (2xx, or dead
/// past the horizon), which also takes the subject's next seq when it waited, or with `retry` (backoff with full
/// jitter, at least `Retry-After`). A Redis or handler fault is logged and leaves the entry scheduled; it comes back
/// when its lease ends. Each `pull` also dead-letters the entries past the horizon, whether the breaker lets anything
/// be sent or not (an endpoint down for longer does not hold the events stream), and forgets the cursors of users
/// with nothing pending; dead letters are capped at about ``WebhookDeliveryConfiguration/deadMax``.
package final class WebhookDelivery: Service {
    package let endpoint: WebhookEndpoint
    let keys: [WebhookKeys]
    let redis: any RedisCommandExecutor
    let sender: WebhookSender
    let configuration: WebhookDeliveryConfiguration
    let consumer: String
    let clock: PipelineClock
    let metrics: WebhookMetrics
    let logger: Logger
    let breaker: Mutex<CircuitBreaker>
    /// What this replica knows of the endpoint's other replicas (``syncFleet(now:)``).
    let fleet = Mutex(FleetView())
    private let inFlight = Mutex(0)
    /// The last lease token's number (``newToken()``).
    private let tokens = Mutex(UInt64(0))
    /// Yielded each time a delivery task ends: a loop whose slots are all taken waits for it instead of polling.
    private let slotFreed = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    /// - Parameters:
    ///   - keys: the endpoint's keys in each partition to deliver from (``Keys/webhook(_:partition:)``).
    ///   - consumer: this replica's consumer name (``Pipeline/ConsumerName/unique()``), also the start of its lease tokens.
    package init(
        endpoint: WebhookEndpoint, keys: [WebhookKeys], redis: any RedisCommandExecutor, sender: WebhookSender,
        configuration: WebhookDeliveryConfiguration, consumer: String, clock: PipelineClock = .system,
        metrics: WebhookMetrics = WebhookMetrics(), logger: Logger
    ) {
        self.endpoint = endpoint
        self.keys = keys
        self.redis = redis
        self.sender = sender
        self.configuration = configuration
        self.consumer = consumer
        self.clock = clock
        self.metrics = metrics
        var logger = logger
        logger[metadataKey: "endpoint"] = "\(endpoint.name)"
        self.logger = logger
        breaker = Mutex(
            CircuitBreaker(
                threshold: configuration.breakerThreshold, cooldown: configuration.breakerCooldown,
                maximumCooldown: configuration.breakerMaximumCooldown))
    }

    package func run() async throws {
        for partition in keys {
            _ = try await redis.xgroupCreate(partition.stream, group: endpoint.group, startID: "0", makeStream: true)
        }
        logger.info("Webhook delivery started", metadata: ["partitions": "\(keys.count)"])
        await withDiscardingTaskGroup { group in
            group.addTask { await self.reportOldest() }
            var start = 0
            var freed = slotFreed.stream.makeAsyncIterator()
            var idle = configuration.pollMinimum
            while !Self.shouldStop {
                let (worked, saturated) = await round(from: start, group: &group)
                start = (start + 1) % keys.count
                if saturated {
                    // Every slot is taken: go on as soon as one frees (each ends within the request timeout).
                    _ = await freed.next()
                } else if worked {
                    idle = configuration.pollMinimum
                } else {
                    // Nothing to do: sleep, twice as long after each empty round, up to the poll interval.
                    await pause(idle)
                    idle = min(idle * 2, configuration.pollInterval)
                }
            }
            // Running deliveries finish (each bounded by the request timeout); the group waits for them.
        }
        logger.info("Webhook delivery stopped")
    }

    /// One pass over the partitions: whether anything was read or taken, and whether every slot was taken (the
    /// breaker closed) when the pass ended.
    private func round(from start: Int, group: inout DiscardingTaskGroup) async -> (worked: Bool, saturated: Bool) {
        var worked = false
        var saturated = false
        await syncFleet(now: clock.nowMilliseconds())
        for offset in 0..<keys.count {
            let partition = keys[(start + offset) % keys.count]
            do {
                let now = clock.nowMilliseconds()
                let (free, probe) = freeSlots(now: now)
                // One call reads new entries and takes (leases) what is due: a step of the loop costs one round trip.
                let pulled = try await NotifierFunctions.pull(
                    on: redis, keys: partition, group: endpoint.group, consumer: consumer, read: configuration.batch,
                    take: free, now: now, token: newToken(), lease: configuration.lease, recheck: configuration.recheck,
                    horizon: configuration.horizon, deadMax: configuration.deadMax, project: endpoint.project)
                if pulled.read > 0 || !pulled.taken.isEmpty { worked = true }
                if pulled.expired > 0 {
                    // Past the horizon while nothing was sent for them (the breaker open, or the backlog too long).
                    metrics.outcome(endpoint.name, "dead", count: pulled.expired)
                    logger.warning(
                        "Webhook events dead-lettered past the horizon unsent",
                        metadata: ["stream": "\(partition.stream)", "count": "\(pulled.expired)"])
                }
                metrics.deadDropped(endpoint.name, pulled.dropped)
                if free == 0 { saturated = !probe && breaker.withLock { $0.allowance(now: now) } == .closed }
                if probe, !pulled.taken.isEmpty { breaker.withLock { $0.beginProbe() } }
                for item in pulled.taken {
                    inFlight.withLock { $0 += 1 }
                    group.addTask {
                        await self.deliverChain(item, keys: partition, probe: probe)
                        self.inFlight.withLock { $0 -= 1 }
                        self.slotFreed.continuation.yield()
                    }
                }
            } catch {
                logger.warning(
                    "Webhook schedule step failed", metadata: ["stream": "\(partition.stream)", "error": "\(error)"])
            }
        }
        return (worked, saturated)
    }

    /// How many entries may be taken now, and whether that one is the half-open breaker's probe. The concurrency is
    /// the endpoint's across its replicas: this one takes its share.
    private func freeSlots(now: Int64) -> (Int, probe: Bool) {
        let running = inFlight.withLock { $0 }
        let replicas = fleet.withLock { $0.replicas }
        let share = max(1, (configuration.concurrency + replicas - 1) / replicas)
        switch breaker.withLock({ $0.allowance(now: now) }) {
        case .closed: return (max(0, share - running), false)
        case .probe: return (running == 0 ? 1 : 0, true)
        case .open: return (0, false)
        }
    }

    /// A lease token of this replica: its consumer name and a counter, unique across replicas and calls.
    private func newToken() -> String {
        let number = tokens.withLock { count in
            count &+= 1
            return count
        }
        return "\(consumer):\(number)"
    }

    /// Delivers a taken entry, then — in the same slot — each next seq of its subject that its finish took, while the
    /// breaker is closed: a user's backlog goes at the speed of the endpoint, not of the loop's polling.
    private func deliverChain(_ item: NotifierFunctions.Taken, keys partition: WebhookKeys, probe: Bool) async {
        var next: NotifierFunctions.Taken? = item
        var first = true
        while let current = next {
            // A probe goes alone: the next seq waits for the breaker's verdict and the loop.
            let chain = !(probe && first)
            next = await deliver(current, keys: partition, chain: chain)
            // A probe that made no request lets the next one go; one that did has closed or reopened the breaker.
            if probe && first { breaker.withLock { $0.endProbe() } }
            first = false
        }
    }

    /// Delivers one taken entry. Returns the subject's next seq when finishing this one took it (only with `chain`,
    /// while the breaker is closed and the service is not stopping).
    func deliver(_ item: NotifierFunctions.Taken, keys partition: WebhookKeys, chain: Bool = true) async -> NotifierFunctions.Taken? {
        let entry = item.entry
        do {
            guard item.state != .unreadable, let event = WebhookEvent(entry: entry) else {
                // Dead-lettered with its own seq when it has one (the cursor moves past it, a visible dead letter),
                // else with seq 0 (nothing to move: the subject's later events go on past the horizon).
                let seq = entry.string("seq").flatMap(Int64.init).flatMap { $0 > 0 ? $0 : nil } ?? 0
                let finished = try await NotifierFunctions.finish(
                    on: redis, keys: partition, group: endpoint.group, entryID: entry.id,
                    subject: WebhookEvent.subject(
                        user: entry.string("user").flatMap { $0.isEmpty ? nil : $0 },
                        side: LedgerSide(label: entry.string("side")) ?? .primary), seq: item.state == .unreadable ? 0 : seq,
                    token: item.token, outcome: .dead, now: clock.nowMilliseconds(), reason: "malformed: not a schema-2 event",
                    deadMax: configuration.deadMax)
                metrics.deadDropped(endpoint.name, finished.dropped)
                metrics.outcome(endpoint.name, "malformed")
                logger.warning("Malformed event dead-lettered", metadata: ["entry": "\(entry.id)"])
                return nil
            }
            return try await deliver(event, attempts: item.attempts, token: item.token, state: item.state, keys: partition, chain: chain)
        } catch is CancellationError {
            // Shutting down: the lease ends and the entry is taken again.
        } catch {
            logger.warning("Webhook delivery step failed", metadata: ["entry": "\(entry.id)", "error": "\(error)"])
        }
        return nil
    }

    private func deliver(
        _ event: WebhookEvent, attempts: Int, token: String, state: NotifierFunctions.Taken.State, keys partition: WebhookKeys,
        chain: Bool
    ) async throws -> NotifierFunctions.Taken? {
        if state == .expired {
            // The earlier seq is gone (trimmed before it was delivered) and this one is past the horizon too: it goes
            // to the dead letters and the subject's later events go on.
            metrics.outcome(endpoint.name, "dead")
            return try await finish(event, partition, token: token, .dead, reason: "predecessor_missing", chain: chain)
        }
        guard endpoint.wants(event.type) else {
            metrics.outcome(endpoint.name, "skipped")
            return try await finish(event, partition, token: token, .skipped, chain: chain)
        }
        let attempt = try await sender.send(
            body: event.body, eventID: event.eventID, to: endpoint, timestamp: clock.nowMilliseconds() / 1000)
        let after = clock.nowMilliseconds()
        switch attempt {
        case .delivered:
            breaker.withLock { $0.recordSuccess() }
            metrics.outcome(endpoint.name, "delivered")
            metrics.latency(endpoint.name, milliseconds: after - event.writtenAtMilliseconds)
            return try await finish(event, partition, token: token, .delivered, chain: chain)
        case .failed(let reason, let status, let retryAfter):
            if Self.isEndpointFailure(status: status) {
                let open = breaker.withLock { breaker in
                    breaker.recordFailure(now: after)
                    return breaker.isOpen
                }
                metrics.breaker(endpoint.name, open: open)
            }
            var delay = configuration.retry.delay(afterAttempt: attempts + 1, unitRandom: clock.unitRandom())
            if let retryAfter, retryAfter > delay { delay = retryAfter }
            let due = after + delay.milliseconds
            if due - event.writtenAtMilliseconds > configuration.horizon.milliseconds {
                metrics.outcome(endpoint.name, "dead")
                logger.warning(
                    "Webhook dead-lettered past the horizon",
                    metadata: ["event.id": "\(event.eventID)", "attempts": "\(attempts + 1)", "reason": "\(reason)"])
                return try await finish(event, partition, token: token, .dead, reason: "horizon: \(reason)", chain: chain)
            } else {
                try await NotifierFunctions.retry(on: redis, keys: partition, event: event, token: token, due: due)
                metrics.outcome(endpoint.name, "failed")
                logger.debug(
                    "Webhook attempt failed",
                    metadata: ["event.id": "\(event.eventID)", "attempt": "\(attempts + 1)", "reason": "\(reason)"])
                return nil
            }
        }
    }

    /// Finishes `event`; with `chain`, while the breaker is closed and the service runs, the same call takes the
    /// subject's next seq when it waited on this one, and returns it.
    private func finish(
        _ event: WebhookEvent, _ partition: WebhookKeys, token: String, _ outcome: NotifierFunctions.Outcome, reason: String = "",
        chain: Bool
    ) async throws -> NotifierFunctions.Taken? {
        let now = clock.nowMilliseconds()
        let goOn = chain && !Self.shouldStop && breaker.withLock({ $0.allowance(now: now) }) == .closed
        let finished = try await NotifierFunctions.finish(
            on: redis, keys: partition, group: endpoint.group, entryID: event.entryID, subject: event.subject, seq: event.seq,
            token: token, outcome: outcome, now: now, reason: reason, next: goOn ? (newToken(), configuration.lease) : nil,
            deadMax: configuration.deadMax)
        metrics.deadDropped(endpoint.name, finished.dropped)
        return finished.taken
    }

    /// Whether a failed attempt says the endpoint (not this event) is in trouble: no response, 408, 429 or 5xx.
    static func isEndpointFailure(status: Int?) -> Bool {
        guard let status else { return true }
        return status == 408 || status == 429 || status >= 500
    }

    /// Records the age of the oldest entry the endpoint has not finished, every few seconds.
    private func reportOldest() async {
        while !Self.shouldStop {
            var oldest: Int64?
            for partition in keys {
                guard let summary = try? await redis.xpendingSummary(partition.stream, group: endpoint.group),
                    let id = summary.smallestID
                else { continue }
                let written = WebhookEvent.milliseconds(ofEntry: id)
                oldest = min(oldest ?? written, written)
            }
            let age = oldest.map { max(0, clock.nowMilliseconds() - $0) } ?? 0
            metrics.oldestUndelivered(endpoint.name, seconds: Double(age) / 1000)
            metrics.breaker(endpoint.name, open: breaker.withLock { $0.isOpen })
            await pause(.seconds(5))
        }
    }

    private func pause(_ duration: Duration) async {
        try? await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
    }

    static var shouldStop: Bool {
        Task.isCancelled || Task.isShuttingDownGracefully
    }
}
