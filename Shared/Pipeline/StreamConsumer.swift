package import Logging
package import Redis
import ServiceLifecycle

/// The consumer runtime every worker uses: reads its group on every partition of a stage's stream, runs a handler
/// per entry in one bounded task group, and applies each ``HandlerOutcome`` atomically with the ack through the
/// pipeline functions, on the keys of the partition the entry came from.
///
/// Each partition has its own reader: it first re-reads its own pending entries (id `0`), then new ones (`>`) on a
/// dedicated connection (the blocking `XREADGROUP`; on a Redis Cluster one that follows the partition's slot),
/// reclaims entries idle longer than the min-idle from crashed consumers (`XAUTOCLAIM`), and dead-letters entries
/// delivered more than `maxDeliveries` times without calling the handler. A handler that throws gets its entry
/// retried; one bad entry never stops the service.
///
/// **Fairness.** The readers share the `concurrency` handler slots (``HandlerSlots``), in arrival order: a reader
/// waits its turn until a slot is free, reads `COUNT = min(readCount, free)`, then queues for the slots its entries
/// need behind the readers already queued. A hot partition's next batch therefore waits behind the batches other
/// partitions read meanwhile, and cannot starve them. Entries read but not started yet are bounded by
/// partitions × `min(readCount, concurrency)`; they are pending for this consumer, as any read entry is.
///
/// On graceful shutdown it stops reading, gives in-flight handlers `drainTimeout`, cancels the rest
/// (their entries stay pending and are reclaimed later) and returns.
package final class StreamConsumer: Service {
    /// Handles one entry. Throwing means "retry" with the error as reason; `CancellationError` means "abandon".
    /// ``StreamMessage/partition`` and ``StreamMessage/stream`` say where the entry came from: writes of the
    /// outcome belong in that partition's slot.
    package typealias Handler = @Sendable (StreamMessage) async throws -> HandlerOutcome
    /// Extra writes applied when the runtime dead-letters an entry on its own (poison, retries exhausted),
    /// e.g. a job status "dead". Gets the message and the reason.
    package typealias DeadLetterWrites = @Sendable (StreamMessage, String) -> [PipelineWrite]
    /// Opens the dedicated connection for one stream's blocking reads.
    package typealias ReaderFactory = @Sendable (_ stream: String, _ clientName: String) -> any RedisDedicatedConnection

    package let configuration: StreamConsumerConfiguration
    let redis: any RedisCommandExecutor
    let makeReader: ReaderFactory
    let handler: Handler
    let deadLetterWrites: DeadLetterWrites
    let clock: PipelineClock
    /// Where the runtime's metrics (``PipelineMetrics``) are recorded.
    let metrics: MetricHandles
    let logger: Logger

    /// - Parameters:
    ///   - redis: the process's client (a ``RedisPool`` or a ``RedisClusterClient``), for acks, claims and pending
    ///     lookups; it also opens each partition's reader (``RedisClient/dedicatedConnection(forKey:clientName:)``).
    package convenience init(
        configuration: StreamConsumerConfiguration,
        redis: some RedisClient,
        clock: PipelineClock = .system,
        metrics: MetricHandles = MetricHandles(),
        logger: Logger,
        deadLetterWrites: @escaping DeadLetterWrites = { _, _ in [] },
        handler: @escaping Handler
    ) {
        self.init(
            configuration: configuration, redis: redis,
            makeReader: { [redis] stream, name in redis.dedicatedConnection(forKey: stream, clientName: name) },
            clock: clock, metrics: metrics, logger: logger, deadLetterWrites: deadLetterWrites, handler: handler)
    }

    /// - Parameters:
    ///   - redis: the shared pool, for acks, claims and pending lookups.
    ///   - readerConfiguration: the one server where the dedicated connections for the blocking reads are opened.
    package convenience init(
        configuration: StreamConsumerConfiguration,
        redis: any RedisCommandExecutor,
        readerConfiguration: RedisConfiguration,
        clock: PipelineClock = .system,
        metrics: MetricHandles = MetricHandles(),
        logger: Logger,
        deadLetterWrites: @escaping DeadLetterWrites = { _, _ in [] },
        handler: @escaping Handler
    ) {
        self.init(
            configuration: configuration, redis: redis,
            makeReader: { stream, name in
                var reader = readerConfiguration
                reader.clientName = name
                return RedisConnection(configuration: reader, logger: logger)
            },
            clock: clock, metrics: metrics, logger: logger, deadLetterWrites: deadLetterWrites, handler: handler)
    }

    package init(
        configuration: StreamConsumerConfiguration,
        redis: any RedisCommandExecutor,
        makeReader: @escaping ReaderFactory,
        clock: PipelineClock = .system,
        metrics: MetricHandles = MetricHandles(),
        logger: Logger,
        deadLetterWrites: @escaping DeadLetterWrites = { _, _ in [] },
        handler: @escaping Handler
    ) {
        self.configuration = configuration
        self.redis = redis
        self.makeReader = makeReader
        self.handler = handler
        self.deadLetterWrites = deadLetterWrites
        self.clock = clock
        self.metrics = metrics
        var logger = logger
        let streams = configuration.streams
        // One stream: on every line, as before. Several: each line about one entry or read names its own.
        if streams.count == 1 { logger[metadataKey: "stream"] = "\(streams[0].keys.stream)" }
        logger[metadataKey: "consumer"] = "\(configuration.consumer)"
        self.logger = logger
    }

    /// A batch one partition's reader hands to the task group, its slots already taken.
    struct Batch: Sendable {
        let stream: PartitionStream
        let items: [ReadItem]
    }

    package func run() async throws {
        let streams = configuration.streams
        guard !streams.isEmpty else { throw PipelineError.invalidPartitionCount(0) }
        for stream in streams { try await createGroup(stream) }
        logger.info(
            "Consumer started",
            metadata: [
                "group": "\(configuration.group)", "partitions": "\(streams.map { $0.partition.description }.joined(separator: ","))",
            ])
        let slots = HandlerSlots(capacity: configuration.concurrency)
        // Entries whose handlers still run. A reclaim of one of them (a slow handler passed the min-idle) is
        // skipped: the entry is ours already, and is reclaimed later if its handler abandons it.
        let handling = HandlingSet()
        let (batches, continuation) = AsyncStream.makeStream(of: Batch.self)

        await withDiscardingTaskGroup { group in
            group.addTask {
                await withDiscardingTaskGroup { readers in
                    for stream in streams {
                        readers.addTask { await self.readLoop(stream, slots: slots, handling: handling, into: continuation) }
                    }
                }
                continuation.finish()
            }
            for await batch in batches {
                for item in batch.items {
                    group.addTask {
                        // Reserved first, then checked: an earlier handler of this entry either still runs (the
                        // reservation failed) or has finished, and then its ack shows here.
                        var stillOurs = true
                        if item.redelivered, let pending = try? await self.isStillPending(item.entry.id, in: batch.stream) {
                            stillOurs = pending
                        }
                        if stillOurs { await self.process(item.entry, deliveryCount: item.deliveryCount, from: batch.stream) }
                        await handling.remove(Self.handlingKey(batch.stream, item.entry.id))
                        await slots.release()
                    }
                }
            }
            await drain(slots, group: &group)
        }
        logger.info("Consumer stopped")
    }

    /// After the readers stopped: waits up to `drainTimeout` for the running handlers, then cancels them (their
    /// entries stay pending).
    private func drain(_ slots: HandlerSlots, group: inout DiscardingTaskGroup) async {
        let running = await slots.inUse
        guard running > 0 else { return }
        logger.info("Consumer draining", metadata: ["in_flight": "\(running)"])
        let deadline = ContinuousClock.now + configuration.drainTimeout
        // Polled: this runs once, at shutdown.
        while await slots.inUse > 0, ContinuousClock.now < deadline, !Task.isCancelled {
            try? await Task.sleep(for: .milliseconds(10))
        }
        let left = await slots.inUse
        guard left > 0 else { return }
        logger.warning("Drain time over; cancelling handlers, their entries stay pending", metadata: ["in_flight": "\(left)"])
        group.cancelAll()
    }

    /// One partition's reader: waits its turn for a free slot, reads at most that many entries, takes their
    /// slots and hands them over, until shutdown.
    private func readLoop(
        _ stream: PartitionStream, slots: HandlerSlots, handling: HandlingSet, into batches: AsyncStream<Batch>.Continuation
    ) async {
        let reader = makeReader(stream.keys.stream, "\(configuration.consumer)-reader")
        defer { reader.close() }
        var state = ReadState()
        while !Self.shouldStop {
            // The graceful-shutdown wrapper (a task group and a shutdown waiter: 3 % of the fulfiller's CPU per job
            // when it wrapped every call) only around a wait that happens. A shutdown that began before is seen by
            // `shouldStop` above; one that begins during a read lets the entries read be handled (and drained).
            let free: Int
            do {
                if let now = await slots.turnIfFree() {
                    free = now
                } else {
                    free = try await cancelWhenGracefulShutdown { try await slots.turn() }
                }
            } catch {
                return
            }
            let read = await nextBatch(stream, reader: reader, count: min(configuration.readCount, free), state: &state)
            var items: [ReadItem] = []
            for item in read where await handling.insert(Self.handlingKey(stream, item.entry.id)) {
                items.append(item)
            }
            guard !items.isEmpty else { continue }
            let needed = items.count
            do {
                if await !slots.takeIfFree(needed) {
                    try await cancelWhenGracefulShutdown { try await slots.take(needed) }
                }
            } catch {
                // Shutting down: the entries stay pending for this consumer name, and are reclaimed later.
                for item in items { await handling.remove(Self.handlingKey(stream, item.entry.id)) }
                return
            }
            batches.yield(Batch(stream: stream, items: items))
        }
    }

    static func handlingKey(_ stream: PartitionStream, _ id: String) -> String {
        "\(stream.partition) \(id)"
    }

    static var shouldStop: Bool {
        Task.isCancelled || Task.isShuttingDownGracefully
    }

    /// `XGROUP CREATE <stream> <group> 0 MKSTREAM`; an existing group (BUSYGROUP) is fine.
    func createGroup(_ stream: PartitionStream) async throws {
        _ = try await redis.xgroupCreate(
            stream.keys.stream, group: configuration.group, startID: "0", makeStream: true
        )
    }
}
