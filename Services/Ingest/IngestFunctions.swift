import Ledger
import Pipeline
import Redis

/// The `tollgate_ingest_v2` Redis Function library (`Lua/ingest.lua`): one atomic enqueue per job, the creation of
/// an order, the settling of the sources' backlog counters.
///
/// `ingest_v2_enqueue` — KEYS: jobs stream, job status hash, dedupe key, backlog hash[, the user's (or service key's)
/// in-flight zset]. ARGV: jobId, dedupeTTLSeconds, statusTTLSeconds, source (the budget: `job.budget` or the job's
/// source), bytes, maxJobs, maxBytes, inFlightCap,
/// jobKeyPrefix, nowMs, n, (field value)×n of the job, m, (field value)×m of the `queued` status.
/// When the dedupe key exists it changes nothing and returns the job id stored there. Otherwise it refuses when
/// the source's unfinished jobs or bytes (`<source>.jobs`, `<source>.bytes` of the backlog hash) would pass
/// their budget, or when the user already has `inFlightCap` unfinished jobs (jobs whose status is final or gone
/// are dropped from the zset first: it needs no bookkeeping elsewhere and cannot drift); else it sets the
/// dedupe key, `XADD`s the job, `HSET`s (with `EXPIRE`) its status, counts it in the backlog and the user's
/// in-flight set. Returns `[jobId, 1 created | 0 duplicate]` or `["", -1, "backlog" | "in_flight"]`. All keys
/// share the slot of the partition J the job starts in (its jobs stream's); the job hashes read by the in-flight
/// check are named from `jobKeyPrefix` and live in that slot too (a user's client jobs all start in Pu(user)).
///
/// `ingest_v2_create_order` — KEYS: order hash, the user's orders zset, the user's pending-orders zset[,
/// token hash]. ARGV: orderNo, nowMs, ttlMs, cap, user, n, (field value)×n of the order. Drops expired unpaid
/// orders from both zsets, refuses when `cap` unpaid orders remain (`[0, msUntilTheOldestExpires]`), else
/// writes the order and (when given) its token mapping, both expiring after `ttlMs` unless paid (the fulfiller
/// removes the expiry), and returns `[1]`. The token key has its own slot: with one partition (one primary) it is
/// written in the same call; with N partitions the call keeps to the user's slot and
/// ``createOrder(_:keys:lifetime:cap:on:)`` writes the mapping right after (`MULTI` `HSET` `PEXPIRE` `EXEC` in
/// the token's slot).
///
/// `ingest_v2_settle_backlog` — KEYS: jobs stream, its retry zset, backlog hash. When no job is unfinished
/// (every group has delivered everything and holds nothing pending, nothing waits for a retry), the counters
/// must be zero: it deletes them and returns 1 (else 0). A counter that ever drifted (an operator deleting
/// entries by hand) heals the next time the stage is idle.
enum IngestFunctions {
    static let library = RedisFunctionLibrary(
        "ingest", version: 2, functions: ["enqueue", "create_order", "settle_backlog"],
        parts: [SharedLua.common, SharedLua.jobs, PackageResources.ingest_lua])
    /// How long the same submission from the same user maps to the same job.
    static let dedupeSeconds = 86_400

    /// Per-source budgets and the user's cap, for one enqueue.
    struct Limits: Sendable, Hashable {
        /// Unfinished jobs of the source (0: no limit).
        var maxJobs: Int
        /// Unfinished payload bytes of the source (0: no limit).
        var maxBytes: Int
        /// The user's unfinished jobs (0: no limit; always 0 for Apple's notifications).
        var inFlightCap: Int

        /// The limits one partition's enqueue checks, given the deployment's: each partition holds its share of
        /// the source budgets, `ceil(budget / partitions)`, so that the whole deployment still holds at most about
        /// the configured backlog (what the budgets bound is Redis memory and the verifiers' queue, which all
        /// partitions share), and one user cannot get more by spreading work: their jobs all start in their own
        /// partition. The user's in-flight cap is per user and stays whole: it lives in the user's partition. A byte
        /// share smaller than the job at hand (`jobBytes`; many partitions, a large receipt) still admits that job
        /// into a partition that holds no bytes, so that no job is refused for good.
        func perPartition(of partitions: Int, jobBytes: Int) -> Limits {
            guard partitions > 1 else { return self }
            func share(_ budget: Int) -> Int { budget <= 0 ? budget : (budget + partitions - 1) / partitions }
            let bytes = maxBytes <= 0 ? maxBytes : max(share(maxBytes), jobBytes)
            return Limits(maxJobs: share(maxJobs), maxBytes: bytes, inFlightCap: inFlightCap)
        }
    }

    /// The `FCALL` that enqueues `job` (which carries its dedupe key, in `partition`, and counted bytes) with its
    /// `queued` status into `partition`: every key (jobs stream, job hash, dedupe key, backlog, the user's in-flight
    /// set, and the job hashes the in-flight check reads) is in that partition's slot.
    /// The job is counted in its budget (`job.budget`, else its source's); `inFlightKey` is the in-flight set the cap
    /// applies to (a service key's; nil: the job's user's, if any), in `partition`'s slot.
    static func enqueueCommand(
        job: Job, status: JobStatus, partition: Partition, keys: Keys, limits: Limits, inFlightKey: String? = nil,
        nowMilliseconds: Int64
    ) -> RedisCommand {
        var redisKeys = [
            keys.jobs(partition: partition).stream, keys.job(job.id, partition: partition),
            job.dedupeKey ?? keys.partitionKey(partition, "dedupe", job.id), keys.backlog(partition: partition),
        ]
        if let inFlight = inFlightKey ?? job.userID.map({ keys.inFlight(user: $0, partition: partition) }), limits.inFlightCap > 0 {
            redisKeys.append(inFlight)
        }
        var arguments: [[UInt8]] = []
        for text in [
            job.id, String(dedupeSeconds), String(JobStatus.retentionSeconds), job.budget ?? job.source.rawValue,
            String(job.countedBytes ?? job.payload.count), String(limits.maxJobs), String(limits.maxBytes),
            String(limits.inFlightCap), keys.job("", partition: partition), String(nowMilliseconds),
        ] {
            arguments.append(Array(text.utf8))
        }
        let fields = job.fields
        arguments.append(Array(String(fields.count).utf8))
        for (name, value) in fields {
            arguments.append(Array(name.utf8))
            arguments.append(value)
        }
        let statusFields = status.fields
        arguments.append(Array(String(statusFields.count).utf8))
        for (name, value) in statusFields {
            arguments.append(Array(name.utf8))
            arguments.append(Array(value.utf8))
        }
        return library.command("enqueue", keys: redisKeys.map { Array($0.utf8) }, arguments: arguments)
    }

    /// What `create_order` decided.
    enum OrderCreation: Sendable, Hashable {
        case created
        /// The user has the most unpaid orders allowed; the oldest expires after this long.
        case tooManyPending(retryAfter: Duration)
    }

    /// Creates `order` unless its user already has `cap` unpaid orders; unpaid, it expires after `lifetime`.
    static func createOrder(
        _ order: Order, keys: Keys, lifetime: Duration, cap: Int, on redis: any RedisCommandExecutor
    ) async throws -> OrderCreation {
        let token = keys.appAccountToken(order.appAccountToken)
        var redisKeys = [
            keys.order(user: order.userID, orderNo: order.orderNo), keys.orders(user: order.userID),
            keys.pendingOrders(user: order.userID),
        ]
        if keys.layout.isSingle { redisKeys.append(token) }
        var arguments = [
            order.orderNo, String(order.createdAtMilliseconds), String(lifetime.milliseconds), String(cap),
            order.userID, String(order.fields.count),
        ]
        for (name, value) in order.fields { arguments += [name, value] }
        let reply = try await library.call("create_order", on: redis, keys: redisKeys, arguments: arguments)
        guard let parts = reply.array, let created = parts.first?.int else {
            throw PipelineError.unexpectedReply("\(library.function("create_order")) returned \(reply)")
        }
        if created == 1 {
            if !keys.layout.isSingle {
                // The token's own slot, after the order: should this fail (the request answers 503), the order stays
                // unpaid without a token anyone holds and expires; the mapping never points at a missing order.
                let replies = try await redis.pipeline([
                    RedisCommand(keyless: "MULTI"),
                    RedisCommand("HSET", key: token, Order.TokenField.user, order.userID, Order.TokenField.orderNo, order.orderNo),
                    RedisCommand("PEXPIRE", key: token, lifetime.milliseconds), RedisCommand(keyless: "EXEC"),
                ])
                guard let exec = replies.last?.array, exec.count == 2 else {
                    throw PipelineError.unexpectedReply("writing the token of order \(order.orderNo) returned \(replies)")
                }
            }
            return .created
        }
        let wait = parts.count > 1 ? parts[1].int ?? 0 : 0
        return .tooManyPending(retryAfter: .milliseconds(max(1000, wait)))
    }

    /// Resets a partition's backlog counters when nothing in it is unfinished; true when it did.
    static func settleBacklog(keys: Keys, partition: Partition = .first, on redis: any RedisCommandExecutor) async throws -> Bool {
        let jobs = keys.jobs(partition: partition)
        let reply = try await library.call(
            "settle_backlog", on: redis, keys: [jobs.stream, jobs.retry, keys.backlog(partition: partition)], arguments: [])
        return reply.int == 1
    }
}
