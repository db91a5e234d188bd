import Logging
import Redis

/// Group commit: concurrent enqueues leave in one pipelined Redis round trip.
///
/// A request joins the queue; whenever fewer than `maxInFlight` round trips are running, the queue's head (up
/// to `maxBatch` calls) is sent as one `pipeline` (followed by `WAIT` when replicas must acknowledge). At low
/// load every call leaves at once (no artificial delay); under load calls accumulate while the previous
/// round trips run, so one round trip (and one AOF fsync) carries many jobs. The queue is bounded: beyond
/// `queueLimit` waiting calls, enqueue fails fast with `503 overloaded`.
actor EnqueueBatcher {
    /// The result of one enqueue function call.
    struct Outcome: Sendable, Hashable {
        let jobID: String
        /// False when the dedupe key already pointed at an earlier job.
        let created: Bool
    }

    private struct Pending {
        let command: RedisCommand
        let continuation: CheckedContinuation<Outcome, any Error>
    }

    private let redis: any RedisCommandExecutor
    private let maxBatch: Int
    private let maxInFlight: Int
    private let queueLimit: Int
    private let waitReplicas: Int
    private let waitTimeoutMilliseconds: Int
    private let metrics: IngestMetrics
    private let logger: Logger
    private var queue: [Pending] = []
    private var head = 0
    private var inFlight = 0

    init(redis: any RedisCommandExecutor, maxBatch: Int, maxInFlight: Int = 1, queueLimit: Int,
         waitReplicas: Int, waitTimeoutMilliseconds: Int, metrics: IngestMetrics, logger: Logger) {
        self.redis = redis
        self.maxBatch = max(1, maxBatch)
        self.maxInFlight = max(1, maxInFlight)
        self.queueLimit = max(1, queueLimit)
        self.waitReplicas = waitReplicas
        self.waitTimeoutMilliseconds = waitTimeoutMilliseconds
        self.metrics = metrics
        self.logger = logger
    }

    /// Runs one enqueue function call (see ``IngestFunctions/enqueueCommand(job:status:keys:dedupeKey:)``)
    /// in the next round trip; throws an ``IngestError`` (503) when Redis is unavailable or the queue is full.
    func enqueue(_ command: RedisCommand) async throws -> Outcome {
        guard queue.count - head < queueLimit else {
            throw IngestError.overloaded("too many enqueues waiting; retry shortly")
        }
        return try await withCheckedThrowingContinuation { continuation in
            queue.append(Pending(command: command, continuation: continuation))
            startRoundTrips()
        }
    }

    private func startRoundTrips() {
        while inFlight < maxInFlight, head < queue.count {
            let end = min(queue.count, head + maxBatch)
            let batch = Array(queue[head..<end])
            head = end
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            inFlight += 1
            Task { await self.roundTrip(batch) }
        }
    }

    private func roundTrip(_ batch: [Pending]) async {
        metrics.batchSize.record(batch.count)
        let results = await Self.execute(batch.map(\.command), on: redis, waitReplicas: waitReplicas,
                                         waitTimeoutMilliseconds: waitTimeoutMilliseconds, logger: logger)
        for (pending, result) in zip(batch, results) {
            pending.continuation.resume(with: result)
        }
        inFlight -= 1
        startRoundTrips()
    }

    /// Sends the calls (and `WAIT`) in one pipeline; reloads the library once if Redis lost it.
    private static func execute(
        _ commands: [RedisCommand], on redis: any RedisCommandExecutor, waitReplicas: Int,
        waitTimeoutMilliseconds: Int, logger: Logger
    ) async -> [Result<Outcome, any Error>] {
        var pipeline = commands
        if waitReplicas > 0 { pipeline.append(RedisCommand("WAIT", waitReplicas, waitTimeoutMilliseconds)) }
        do {
            var replies = try await redis.pipeline(pipeline)
            if replies.contains(where: { if case .error(let text) = $0 { IngestFunctions.isMissingFunction(text) } else { false } }) {
                logger.warning("ingest functions missing in Redis; reloading")
                try await IngestFunctions.load(on: redis)
                replies = try await redis.pipeline(pipeline)
            }
            var replicated = true
            if waitReplicas > 0, let acknowledged = replies.last?.int {
                replicated = acknowledged >= Int64(waitReplicas)
                if !replicated {
                    logger.warning("enqueue not acknowledged by enough replicas",
                                   metadata: ["redis.replicas": "\(acknowledged)", "redis.wanted": "\(waitReplicas)"])
                }
            }
            return commands.indices.map { index in
                guard replicated else { return .failure(IngestError.replicationTimeout()) }
                return parse(replies[index], logger: logger)
            }
        } catch {
            logger.warning("enqueue round trip failed", metadata: ["error": "\(error)", "batch.size": "\(commands.count)"])
            return commands.map { _ in .failure(IngestError.redisUnavailable()) }
        }
    }

    private static func parse(_ reply: RedisReply, logger: Logger) -> Result<Outcome, any Error> {
        guard let parts = reply.array, parts.count == 2, let jobID = parts[0].string, let created = parts[1].int else {
            logger.error("unexpected enqueue reply", metadata: ["reply": "\(reply)".count > 200 ? "(long)" : "\(reply)"])
            return .failure(IngestError.redisUnavailable())
        }
        return .success(Outcome(jobID: jobID, created: created == 1))
    }
}
