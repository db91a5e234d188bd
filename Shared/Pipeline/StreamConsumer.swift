import Logging
import Redis
import ServiceLifecycle

/// The consumer runtime every worker uses: reads its group, runs a handler per entry in a bounded task
/// group, and applies each ``HandlerOutcome`` atomically with the ack through the pipeline functions.
///
/// It first re-reads its own pending entries (id `0`), then new ones (`>`) on a dedicated connection
/// (the blocking `XREADGROUP`), reclaims entries idle longer than the min-idle from crashed consumers
/// (`XAUTOCLAIM`), and dead-letters entries delivered more than `maxDeliveries` times without calling the
/// handler. A handler that throws gets its entry retried; one bad entry never stops the service.
///
/// On graceful shutdown it stops reading, gives in-flight handlers `drainTimeout`, cancels the rest
/// (their entries stay pending and are reclaimed later) and returns.
package final class StreamConsumer: Service {
    /// Handles one entry. Throwing means "retry" with the error as reason; `CancellationError` means "abandon".
    package typealias Handler = @Sendable (StreamMessage) async throws -> HandlerOutcome
    /// Extra writes applied when the runtime dead-letters an entry on its own (poison, retries exhausted),
    /// e.g. a job status "dead". Gets the message and the reason.
    package typealias DeadLetterWrites = @Sendable (StreamMessage, String) -> [PipelineWrite]

    package let configuration: StreamConsumerConfiguration
    let redis: any RedisCommandExecutor
    let readerConfiguration: RedisConfiguration
    let handler: Handler
    let deadLetterWrites: DeadLetterWrites
    let clock: PipelineClock
    let logger: Logger
    let metrics: PipelineMetrics

    /// - Parameters:
    ///   - redis: the shared pool, for acks, claims and pending lookups.
    ///   - readerConfiguration: where to open the dedicated connection for the blocking reads.
    package init(
        configuration: StreamConsumerConfiguration,
        redis: any RedisCommandExecutor,
        readerConfiguration: RedisConfiguration,
        clock: PipelineClock = .system,
        logger: Logger,
        deadLetterWrites: @escaping DeadLetterWrites = { _, _ in [] },
        handler: @escaping Handler
    ) {
        self.configuration = configuration
        self.redis = redis
        var reader = readerConfiguration
        reader.clientName = "\(configuration.consumer)-reader"
        self.readerConfiguration = reader
        self.handler = handler
        self.deadLetterWrites = deadLetterWrites
        self.clock = clock
        var logger = logger
        logger[metadataKey: "stream"] = "\(configuration.stream.stream)"
        logger[metadataKey: "consumer"] = "\(configuration.consumer)"
        self.logger = logger
        self.metrics = PipelineMetrics(stream: configuration.stream.stream)
    }

    private enum ChildResult: Sendable {
        case handled
        case drainDeadline
    }

    package func run() async throws {
        try await createGroup()
        let reader = RedisConnection(configuration: readerConfiguration, logger: logger)
        defer { reader.close() }
        var state = ReadState()
        logger.info("Consumer started", metadata: ["group": "\(configuration.group)"])

        await withTaskGroup(of: ChildResult.self) { group in
            var running = 0
            // Ids whose handlers still run. A reclaim of one of them (a slow handler passed the min-idle) is
            // skipped: the entry is ours already, and is reclaimed later if its handler abandons it.
            let handling = HandlingSet()
            while !Self.shouldStop {
                let batch = await nextBatch(reader: reader, state: &state)
                for (entry, deliveryCount, redelivered) in batch {
                    guard await handling.insert(entry.id) else { continue }
                    while running >= configuration.concurrency {
                        _ = await group.next()
                        running -= 1
                    }
                    group.addTask {
                        // Reserved first, then checked: an earlier handler of this entry either still runs
                        // (the insert above failed) or has finished, and then its ack shows here.
                        var stillOurs = true
                        if redelivered, let pending = try? await self.isStillPending(entry.id) {
                            stillOurs = pending
                        }
                        if stillOurs { await self.process(entry, deliveryCount: deliveryCount) }
                        await handling.remove(entry.id)
                        return .handled
                    }
                    running += 1
                }
            }
            guard running > 0 else { return }
            logger.info("Consumer draining", metadata: ["in_flight": "\(running)"])
            let drain = configuration.drainTimeout
            group.addTask {
                try? await Task.sleep(for: drain)
                return .drainDeadline
            }
            var timerRunning = true
            while running > 0, let result = await group.next() {
                switch result {
                case .handled:
                    running -= 1
                case .drainDeadline:
                    timerRunning = false
                    logger.warning(
                        "Drain time over; cancelling handlers, their entries stay pending",
                        metadata: ["in_flight": "\(running)"])
                    group.cancelAll()
                }
            }
            if timerRunning { group.cancelAll() }
        }
        logger.info("Consumer stopped")
    }

    static var shouldStop: Bool {
        Task.isCancelled || Task.isShuttingDownGracefully
    }

    /// `XGROUP CREATE <stream> <group> 0 MKSTREAM`; an existing group (BUSYGROUP) is fine.
    func createGroup() async throws {
        _ = try await redis.xgroupCreate(
            configuration.stream.stream, group: configuration.group, startID: "0", makeStream: true
        )
    }
}
