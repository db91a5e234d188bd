package import Logging
package import Redis
import ServiceLifecycle

/// Trims streams with `XTRIM MINID` (never `MAXLEN`) below the oldest entry any consumer group still needs.
///
/// For each group the oldest needed entry is the smaller of its smallest pending id and the id right after
/// its last-delivered id (everything after that is undelivered). The trim point is the minimum over all
/// groups, and, with a retention window, no later than `now - retention`. A stream without groups (the
/// outbound events stream, read by the app's backend with plain `XREAD`) is trimmed only when a retention
/// window is set, to `now - retention`; without one it is never trimmed.
package final class StreamJanitor: Service {
    package let streams: [StreamKeys]
    package let interval: Duration
    /// Entries younger than this are kept even when every group is done with them.
    package let retention: Duration?
    /// Consumers holding nothing and idle this long are deleted from the groups (nil: never).
    package let consumerIdleLimit: Duration?
    /// The events streams' further bounds: idle groups, a byte cap (``StreamBounds``; none by default).
    package let bounds: StreamBounds
    let redis: any RedisCommandExecutor
    let clock: PipelineClock
    let metrics: MetricHandles
    let logger: Logger

    package init(
        streams: [StreamKeys], redis: any RedisCommandExecutor, interval: Duration = .seconds(30),
        retention: Duration? = nil, consumerIdleLimit: Duration? = .seconds(3600), bounds: StreamBounds = StreamBounds(),
        clock: PipelineClock = .system, metrics: MetricHandles = MetricHandles(), logger: Logger
    ) {
        self.streams = streams
        self.redis = redis
        self.interval = interval
        self.retention = retention
        self.consumerIdleLimit = consumerIdleLimit
        self.bounds = bounds
        self.clock = clock
        self.metrics = metrics
        self.logger = logger
    }

    /// The id below which `stream` may be trimmed now, or nil when nothing may be trimmed.
    package func trimPoint(of stream: String) async throws -> StreamID? {
        try await trimPlan(of: stream).point
    }

    /// The trim point, and the groups that hold entries (every group, less those idle past
    /// ``StreamBounds/groupIdleLimit``); nil groups when the stream does not exist.
    func trimPlan(of stream: String) async throws -> (point: StreamID?, holding: [StreamGroupInfo]?) {
        var groups: [StreamGroupInfo]
        do {
            groups = try await redis.xinfoGroups(stream)
        } catch RedisError.server(_, let message) where message.contains("no such key") {
            return (nil, nil)
        }
        if bounds.groupIdleLimit != nil || bounds.maxBytes != nil {
            var holding: [StreamGroupInfo] = []
            for group in groups where try await holds(group, stream: stream) { holding.append(group) }
            groups = holding
        }
        var point: StreamID?
        if groups.isEmpty {
            guard let retention else { return (nil, groups) }
            return (StreamID(milliseconds: UInt64(max(0, clock.nowMilliseconds() - retention.milliseconds))), groups)
        }
        for group in groups {
            guard let delivered = StreamID(group.lastDeliveredID) else { return (nil, groups) }
            var needed = delivered.successor
            let pending = try await redis.xpendingSummary(stream, group: group.name)
            if pending.count > 0 {
                guard let smallest = pending.smallestID.flatMap(StreamID.init) else { return (nil, groups) }
                needed = min(needed, smallest)
            }
            point = point.map { min($0, needed) } ?? needed
        }
        if let retention, let current = point {
            let cutoff = max(0, clock.nowMilliseconds() - retention.milliseconds)
            point = min(current, StreamID(milliseconds: UInt64(cutoff)))
        }
        return (point, groups)
    }

    /// Trims every stream once; returns how many entries each lost.
    @discardableResult
    package func trimOnce() async throws -> [String: Int] {
        var removed: [String: Int] = [:]
        for keys in streams {
            let plan = try await trimPlan(of: keys.stream)
            var capped = 0
            if bounds.maxBytes != nil, let holding = plan.holding {
                capped = try await enforceByteCap(of: keys.stream, holding: holding)
            }
            guard let point = plan.point else {
                removed[keys.stream] = capped
                continue
            }
            let count = try await redis.xtrimMinID(keys.stream, minID: point.description) + capped
            PipelineMetrics(stream: keys.stream, handles: metrics).trimmed(count)
            if count > 0 {
                logger.debug("Trimmed stream", metadata: ["stream": "\(keys.stream)", "removed": "\(count)", "min_id": "\(point)"])
            }
            removed[keys.stream] = count
        }
        return removed
    }

    package func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                try await trimOnce()
                if let consumerIdleLimit {
                    for keys in streams { try await pruneIdleConsumers(of: keys.stream, idleLimit: consumerIdleLimit) }
                }
            } catch {
                logger.error("Stream trim failed", metadata: ["error": "\(error)"])
            }
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: self.interval) }
            } catch {
                return
            }
        }
    }
}
