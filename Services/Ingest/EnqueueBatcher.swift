import CoreMetrics
import Logging
import Redis

/// Group commit: concurrent enqueues share Redis round trips and AOF fsyncs.
///
/// A request joins the queue; whenever fewer than `maxInFlight` round trips are running, the queue's head (up
/// to `maxBatch` calls and `maxBatchBytes` of arguments, always at least one call) is sent as one `pipeline`
/// on its own pooled connection (followed by `WAIT` when replicas must acknowledge). At low load every call
/// leaves at once (no artificial delay); under load calls accumulate while the previous round trips run.
///
/// Why bytes bound a batch: Redis reads at most 16 KiB from each client per event-loop iteration and, with
/// `appendfsync always`, fsyncs once per iteration that wrote. One fsync therefore covers the jobs of *every*
/// connection that had a whole command buffered, but a long pipeline on one connection (e.g. 32 notifications
/// of 19 KB) is read 16 KiB at a time, one fsync each. Many round trips of about 16 KiB in flight at once let
/// Redis' own group commit put many jobs behind each fsync; small jobs (receipts, V1 notifications) still
/// share a round trip. The queue is bounded: beyond `queueLimit` waiting calls, enqueue fails fast with
/// `503 overloaded`.
actor EnqueueBatcher {
    /// The result of one enqueue function call.
    struct Outcome: Sendable, Hashable {
        let jobID: String
        /// False when the dedupe key already pointed at an earlier job.
        let created: Bool
    }

    private struct Pending {
        let command: RedisCommand
        /// The command's argument bytes.
        let bytes: Int
        let continuation: CheckedContinuation<Outcome, any Error>
    }

    private let redis: any RedisCommandExecutor
    private let maxBatch: Int
    private let maxBatchBytes: Int
    private let maxInFlight: Int
    private let queueLimit: Int
    private let waitReplicas: Int
    private let waitTimeoutMilliseconds: Int
    private let metrics: IngestMetrics
    private let logger: Logger
    private var queue: [Pending] = []
    private var head = 0
    private var inFlight = 0

    init(
        redis: any RedisCommandExecutor, maxBatch: Int, maxBatchBytes: Int = .max, maxInFlight: Int = 1,
        queueLimit: Int, waitReplicas: Int, waitTimeoutMilliseconds: Int, metrics: IngestMetrics, logger: Logger
    ) {
        self.redis = redis
        self.maxBatch = max(1, maxBatch)
        self.maxBatchBytes = max(1, maxBatchBytes)
        self.maxInFlight = max(1, maxInFlight)
        self.queueLimit = max(1, queueLimit)
        self.waitReplicas = waitReplicas
        self.waitTimeoutMilliseconds = waitTimeoutMilliseconds
        self.metrics = metrics
        self.logger = logger
    }

    /// Runs one enqueue function call (see ``IngestFunctions/enqueueCommand(job:status:partition:keys:limits:nowMilliseconds:)``)
    /// in the next round trip; throws an ``IngestError``: 503 when Redis is unavailable, the queue is full or the
    /// source's backlog is at its budget, 429 when the user has too many unfinished jobs.
    func enqueue(_ command: RedisCommand) async throws -> Outcome {
        guard queue.count - head < queueLimit else {
            throw IngestError.overloaded("too many enqueues waiting; retry shortly")
        }
        return try await withCheckedThrowingContinuation { continuation in
            let bytes = command.arguments.reduce(0) { $0 + $1.count }
            queue.append(Pending(command: command, bytes: bytes, continuation: continuation))
            startRoundTrips()
        }
    }

    private func startRoundTrips() {
        while inFlight < maxInFlight, head < queue.count {
            var end = head + 1
            var bytes = queue[head].bytes
            while end < queue.count, end - head < maxBatch, bytes + queue[end].bytes <= maxBatchBytes {
                bytes += queue[end].bytes
                end += 1
            }
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
        let results = await Self.execute(
            batch.map(\.command), on: redis, waitReplicas: waitReplicas,
            waitTimeoutMilliseconds: waitTimeoutMilliseconds, logger: logger)
        for (pending, result) in zip(batch, results) {
            pending.continuation.resume(with: result)
        }
        inFlight -= 1
        startRoundTrips()
    }

    /// Sends the calls (and `WAIT`) in one pipeline, through the library's one way of calling durably and recovering
    /// a lost library. On a Redis Cluster the batch's calls go to the primaries of their partitions; the cluster client
    /// sends the trailing `WAIT` to each of them and answers the fewest replicas any acknowledged.
    private static func execute(
        _ commands: [RedisCommand], on redis: any RedisCommandExecutor, waitReplicas: Int,
        waitTimeoutMilliseconds: Int, logger: Logger
    ) async -> [Result<Outcome, any Error>] {
        let durability = RedisDurability(replicas: waitReplicas, timeoutMilliseconds: waitTimeoutMilliseconds)
        do {
            let (replies, acknowledged) = try await IngestFunctions.library.pipeline(commands, on: redis, durability: durability)
            let replicated = durability.isMet(by: acknowledged)
            if !replicated {
                logger.warning(
                    "enqueue not acknowledged by enough replicas",
                    metadata: ["redis.replicas": "\(acknowledged ?? 0)", "redis.wanted": "\(waitReplicas)"])
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
        if let parts = reply.array, parts.count == 3, parts[1].int == -1 {
            switch parts[2].string {
            case "in_flight": return .failure(IngestError.tooManyInFlight())
            default: return .failure(IngestError.overloaded("this source's unfinished jobs are at their budget; retry later"))
            }
        }
        guard let parts = reply.array, parts.count == 2, let jobID = parts[0].string, let created = parts[1].int else {
            logger.error("unexpected enqueue reply", metadata: ["reply": "\(reply)".count > 200 ? "(long)" : "\(reply)"])
            return .failure(IngestError.redisUnavailable())
        }
        return .success(Outcome(jobID: jobID, created: created == 1))
    }
}
