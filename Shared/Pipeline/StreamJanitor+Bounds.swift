import Logging
import Metrics
import Redis

/// What the janitor of the outbound events streams bounds beyond the retention (docs/EVENTS.md, "Keeping"): a
/// consumer group whose readers have been gone for ``groupIdleLimit`` stops holding entries, and a stream past
/// ``maxBytes`` is cut back from its oldest entries whatever a group still needs, so that the events can never make
/// Redis refuse the ledger's own writes. What that drops is counted (`tollgate_events_dropped_total{stream}`); the
/// gauges `tollgate_events_stream_bytes{stream}` and `tollgate_events_group_idle_seconds{stream,group}` let an alert
/// fire well before either bound is reached.
package struct StreamBounds: Sendable, Hashable {
    package var groupIdleLimit: Duration?
    package var maxBytes: Int?

    package init(groupIdleLimit: Duration? = nil, maxBytes: Int? = nil) {
        self.groupIdleLimit = groupIdleLimit
        self.maxBytes = maxBytes
    }
}

extension StreamJanitor {
    /// How long ago the group's readers last read: the smallest `idle` of its consumers, or, with none, the age of
    /// the last entry it was given.
    func idleMilliseconds(of group: StreamGroupInfo, stream: String) async throws -> Int64 {
        let reply = try await redis.send(RedisCommand("XINFO", arguments: ["CONSUMERS", stream, group.name], keysAt: [1]))
        var smallest: Int64?
        for consumer in reply.array ?? [] {
            let fields = consumer.array ?? []
            for index in stride(from: 0, to: fields.count - 1, by: 2) where fields[index].string == "idle" {
                if let idle = fields[index + 1].int { smallest = min(smallest ?? idle, idle) }
            }
        }
        if let smallest { return smallest }
        let delivered = StreamID(group.lastDeliveredID)?.milliseconds ?? 0
        return max(0, clock.nowMilliseconds() - Int64(delivered))
    }

    /// Whether `group` still holds entries: a group idle past ``StreamBounds/groupIdleLimit`` does not.
    func holds(_ group: StreamGroupInfo, stream: String) async throws -> Bool {
        let idle = try await idleMilliseconds(of: group, stream: stream)
        metrics.gauge("tollgate_events_group_idle_seconds", [("stream", stream), ("group", group.name)])
            .record(Double(idle) / 1000)
        guard let limit = bounds.groupIdleLimit else { return true }
        if idle < limit.milliseconds { return true }
        logger.warning(
            "Events consumer group idle past its limit no longer holds entries",
            metadata: ["stream": "\(stream)", "group": "\(group.name)", "idle.ms": "\(idle)"])
        return false
    }

    /// Past ``StreamBounds/maxBytes``, cuts `stream` back to about nine tenths of the cap from its oldest entries, and
    /// counts how many of those some holding group had not yet finished (its `lag` plus its pending entries: at
    /// most that many of the newest entries are unread by it). Returns how many entries went.
    func enforceByteCap(of stream: String, holding groups: [StreamGroupInfo]) async throws -> Int {
        let bytes = try await redis.send(RedisCommand("MEMORY", arguments: ["USAGE", stream, "SAMPLES", "64"], keysAt: [1])).int ?? 0
        metrics.gauge("tollgate_events_stream_bytes", [("stream", stream)]).record(Double(bytes))
        guard let cap = bounds.maxBytes, bytes > cap else { return 0 }
        let length = try await redis.xlen(stream)
        let keep = Int(Double(length) * Double(cap) * 0.9 / Double(bytes))
        let dropped = try await redis.send(RedisCommand("XTRIM", key: stream, "MAXLEN", "=", keep)).int.map(Int.init) ?? 0
        let unfinished = groups.map { ($0.lag ?? length) + $0.pending }.max() ?? 0
        let unread = max(0, min(dropped, dropped - length + unfinished))
        metrics.counter("tollgate_events_dropped_total", [("stream", stream)]).increment(by: Int64(unread))
        logger.error(
            "Events stream over its byte cap: oldest entries dropped",
            metadata: [
                "stream": "\(stream)", "bytes": "\(bytes)", "cap": "\(cap)", "dropped": "\(dropped)", "unread": "\(unread)",
            ])
        return dropped
    }
}
