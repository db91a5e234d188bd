import Logging
import Redis
import ServiceLifecycle

/// One entry a reader got, with its delivery count, and whether it was delivered before (own pending or reclaimed:
/// its handler must first check it is still pending, see ``StreamConsumer/isStillPending(_:in:)``).
struct ReadItem: Sendable {
    let entry: StreamEntry
    let deliveryCount: Int
    let redelivered: Bool
}

/// Where one partition's reader is: own pending entries first, then claims and new entries.
struct ReadState {
    /// The id after which own pending entries are still to be re-read; nil once all were.
    var pendingCursor: String? = "0"
    /// The `XAUTOCLAIM` scan position (`0-0` starts over).
    var claimCursor = "0-0"
    var nextClaim = ContinuousClock.now
    var consecutiveFailures = 0
}

extension StreamConsumer {
    /// At most `count` next entries of `stream` to handle; empty on a read timeout, on shutdown, or after a Redis
    /// error (logged, then a short capped pause).
    func nextBatch(
        _ stream: PartitionStream, reader: any RedisDedicatedConnection, count: Int, state: inout ReadState
    ) async -> [ReadItem] {
        do {
            let batch = try await read(stream, reader: reader, count: count, state: &state)
            state.consecutiveFailures = 0
            return batch
        } catch {
            if Self.shouldStop { return [] }
            state.consecutiveFailures += 1
            if case RedisError.server(code: "NOGROUP", _) = error {
                logger.warning("Consumer group missing; creating it again", metadata: ["stream": "\(stream)"])
                try? await createGroup(stream)
            } else {
                logger.error("Stream read failed", metadata: ["stream": "\(stream)", "error": "\(error)"])
            }
            let exponent = min(state.consecutiveFailures, 6)
            let pause = min(Duration.seconds(5), .milliseconds(50 * (1 << exponent)))
            try? await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
            return []
        }
    }

    private func read(
        _ partition: PartitionStream, reader: any RedisDedicatedConnection, count: Int, state: inout ReadState
    ) async throws -> [ReadItem] {
        let stream = partition.keys.stream
        if let cursor = state.pendingCursor {
            let entries = try await reader.xreadgroup(
                group: configuration.group, consumer: configuration.consumer, stream: stream,
                id: cursor, count: count, block: nil
            )
            guard let last = entries.last else {
                state.pendingCursor = nil
                return []
            }
            state.pendingCursor = last.id
            logger.info("Re-reading own pending entries", metadata: ["stream": "\(stream)", "count": "\(entries.count)"])
            return try await withDeliveryCounts(entries, in: partition)
        }
        if ContinuousClock.now >= state.nextClaim {
            let result = try await redis.xautoclaim(
                stream, group: configuration.group, consumer: configuration.consumer,
                minIdle: configuration.claimMinIdle, start: state.claimCursor, count: count
            )
            state.claimCursor = result.nextStart
            let scanDone = StreamID(result.nextStart) == StreamID(milliseconds: 0)
            state.nextClaim = scanDone ? .now + configuration.claimInterval : .now
            if !result.entries.isEmpty {
                PipelineMetrics(stream: stream, handles: metrics).reclaimed(result.entries.count)
                logger.info("Reclaimed idle entries", metadata: ["stream": "\(stream)", "count": "\(result.entries.count)"])
                return try await withDeliveryCounts(result.entries, in: partition)
            }
            if !scanDone { return [] }
        }
        let entries = try await reader.xreadgroup(
            group: configuration.group, consumer: configuration.consumer, stream: stream,
            id: ">", count: count, block: configuration.block
        )
        return entries.map { ReadItem(entry: $0, deliveryCount: 1, redelivered: false) }
    }

    /// Looks up each entry's delivery count in this consumer's pending list (`XPENDING`); an entry no longer
    /// there (acknowledged meanwhile) is dropped.
    private func withDeliveryCounts(_ entries: [StreamEntry], in stream: PartitionStream) async throws -> [ReadItem] {
        let ids = entries.compactMap { StreamID($0.id) }
        guard let low = ids.min(), let high = ids.max() else { return [] }
        let pending = try await redis.xpending(
            stream.keys.stream, group: configuration.group,
            start: low.description, end: high.description,
            count: max(100, entries.count * 4), consumer: configuration.consumer
        )
        var counts: [String: Int] = [:]
        for item in pending { counts[item.id] = item.deliveryCount }
        return entries.compactMap { entry in
            counts[entry.id].map { ReadItem(entry: entry, deliveryCount: $0, redelivered: true) }
        }
    }

    /// True while `id` is still pending for this consumer. A handler of a re-delivered entry checks this after
    /// reserving the id in its ``HandlingSet``: a reclaim read while an earlier handler of the same entry was
    /// still running may arrive after that handler acknowledged it, and must not run the handler again.
    func isStillPending(_ id: String, in stream: PartitionStream) async throws -> Bool {
        let pending = try await redis.xpending(
            stream.keys.stream, group: configuration.group, start: id, end: id, count: 1,
            consumer: configuration.consumer
        )
        return pending.contains { $0.id == id }
    }
}
