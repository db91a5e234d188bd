import Ledger
import Pipeline
import Redis

/// The `tollgate_ingest_v2` Redis Function library (`Lua/ingest.lua`): one atomic enqueue per job, the creation of
/// an order, the settling of the sources' backlog counters.
///
/// `ingest_v2_enqueue` — KEYS: jobs stream, job status hash, dedupe key, backlog hash[, the user's in-flight
/// zset]. ARGV: jobId, dedupeTTLSeconds, statusTTLSeconds, source, bytes, maxJobs, maxBytes, inFlightCap,
/// jobKeyPrefix, nowMs, n, (field value)×n of the job, m, (field value)×m of the `queued` status.
/// When the dedupe key exists it changes nothing and returns the job id stored there. Otherwise it refuses when
/// the source's unfinished jobs or bytes (`<source>.jobs`, `<source>.bytes` of the backlog hash) would pass
/// their budget, or when the user already has `inFlightCap` unfinished jobs (jobs whose status is final or gone
/// are dropped from the zset first: it needs no bookkeeping elsewhere and cannot drift); else it sets the
/// dedupe key, `XADD`s the job, `HSET`s (with `EXPIRE`) its status, counts it in the backlog and the user's
/// in-flight set. Returns `[jobId, 1 created | 0 duplicate]` or `["", -1, "backlog" | "in_flight"]`. All keys
/// share the jobs stream's slot; the job hashes read by the in-flight check are named from `jobKeyPrefix`
/// and live in that slot too.
///
/// `ingest_v2_create_order` — KEYS: order hash, the user's orders zset, the user's pending-orders zset,
/// token hash. ARGV: orderNo, nowMs, ttlMs, cap, user, n, (field value)×n of the order. Drops expired unpaid
/// orders from both zsets, refuses when `cap` unpaid orders remain (`[0, msUntilTheOldestExpires]`), else
/// writes the order and its token mapping, both expiring after `ttlMs` unless paid (the fulfiller removes
/// the expiry), and returns `[1]`. The token key has its own slot: one primary (the default deployment).
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
    }

    /// The `FCALL` that enqueues `job` (which carries its dedupe key and counted bytes) with its `queued` status.
    static func enqueueCommand(job: Job, status: JobStatus, keys: Keys, limits: Limits, nowMilliseconds: Int64) -> RedisCommand {
        var redisKeys = [
            keys.jobs().stream, keys.job(job.id), job.dedupeKey ?? keys.partitionKey(0, "dedupe", job.id),
            keys.backlog(),
        ]
        if let user = job.userID, limits.inFlightCap > 0 { redisKeys.append(keys.inFlight(user: user)) }
        var arguments: [[UInt8]] = []
        for text in [
            job.id, String(dedupeSeconds), String(JobStatus.retentionSeconds), job.source.rawValue,
            String(job.countedBytes ?? job.payload.count), String(limits.maxJobs), String(limits.maxBytes),
            String(limits.inFlightCap), keys.job(""), String(nowMilliseconds),
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
        let redisKeys = [
            keys.order(user: order.userID, orderNo: order.orderNo), keys.orders(user: order.userID),
            keys.pendingOrders(user: order.userID), keys.appAccountToken(order.appAccountToken),
        ]
        var arguments = [
            order.orderNo, String(order.createdAtMilliseconds), String(lifetime.milliseconds), String(cap),
            order.userID, String(order.fields.count),
        ]
        for (name, value) in order.fields { arguments += [name, value] }
        let reply = try await library.call("create_order", on: redis, keys: redisKeys, arguments: arguments)
        guard let parts = reply.array, let created = parts.first?.int else {
            throw PipelineError.unexpectedReply("\(library.function("create_order")) returned \(reply)")
        }
        if created == 1 { return .created }
        let wait = parts.count > 1 ? parts[1].int ?? 0 : 0
        return .tooManyPending(retryAfter: .milliseconds(max(1000, wait)))
    }

    /// Resets the backlog counters when nothing is unfinished; true when it did.
    static func settleBacklog(keys: Keys, on redis: any RedisCommandExecutor) async throws -> Bool {
        let jobs = keys.jobs()
        let reply = try await library.call("settle_backlog", on: redis, keys: [jobs.stream, jobs.retry, keys.backlog()], arguments: [])
        return reply.int == 1
    }
}
