import Logging
import Redis
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
    let redis: any RedisCommandExecutor
    let clock: PipelineClock
    let logger: Logger

    package init(
        streams: [StreamKeys], redis: any RedisCommandExecutor, interval: Duration = .seconds(30),
        retention: Duration? = nil, consumerIdleLimit: Duration? = .seconds(3600), clock: PipelineClock = .system,
        logger: Logger
    ) {
        self.streams = streams
        self.redis = redis
        self.interval = interval
        self.retention = retention
        self.consumerIdleLimit = consumerIdleLimit
        self.clock = clock
        self.logger = logger
    }

    /// The id below which `stream` may be trimmed now, or nil when nothing may be trimmed.
    package func trimPoint(of stream: String) async throws -> StreamID? {
        let groups: [StreamGroupInfo]
        do {
            groups = try await redis.xinfoGroups(stream)
        } catch RedisError.server(_, let message) where message.contains("no such key") {
            return nil
        }
        var point: StreamID?
        if groups.isEmpty {
            guard let retention else { return nil }
            return StreamID(milliseconds: UInt64(max(0, clock.nowMilliseconds() - retention.milliseconds)))
        }
        for group in groups {
            guard let delivered = StreamID(group.lastDeliveredID) else { return nil }
            var needed = delivered.successor
            let pending = try await redis.xpendingSummary(stream, group: group.name)
            if pending.count > 0 {
                guard let smallest = pending.smallestID.flatMap(StreamID.init) else { return nil }
                needed = min(needed, smallest)
            }
            point = point.map { min($0, needed) } ?? needed
        }
        if let retention, let current = point {
            let cutoff = max(0, clock.nowMilliseconds() - retention.milliseconds)
            point = min(current, StreamID(milliseconds: UInt64(cutoff)))
        }
        return point
    }

    /// Trims every stream once; returns how many entries each lost.
    @discardableResult
    package func trimOnce() async throws -> [String: Int] {
        var removed: [String: Int] = [:]
        for keys in streams {
            guard let point = try await trimPoint(of: keys.stream) else {
                removed[keys.stream] = 0
                continue
            }
            let count = try await redis.xtrimMinID(keys.stream, minID: point.description)
            PipelineMetrics(stream: keys.stream).trimmed(count)
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
