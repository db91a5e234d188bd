import Ledger
import Pipeline
import Redis

/// The `tollgate_ingest_v2` Redis Function library: one atomic enqueue per job, and the creation of an order.
///
/// `tg_ingest_v2_enqueue` — KEYS: jobs stream, job status hash, dedupe key, backlog hash[, the user's in-flight
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
/// `tg_ingest_v2_create_order` — KEYS: order hash, the user's orders zset, the user's pending-orders zset,
/// token hash. ARGV: orderNo, nowMs, ttlMs, cap, user, n, (field value)×n of the order. Drops expired unpaid
/// orders from both zsets, refuses when `cap` unpaid orders remain (`[0, msUntilTheOldestExpires]`), else
/// writes the order and its token mapping, both expiring after `ttlMs` unless paid (the fulfiller removes
/// the expiry), and returns `[1]`. The token key has its own slot: one primary (the default deployment).
///
/// `tg_ingest_v2_settle_backlog` — KEYS: jobs stream, its retry zset, backlog hash. When no job is unfinished
/// (every group has delivered everything and holds nothing pending, nothing waits for a retry), the counters
/// must be zero: it deletes them and returns 1 (else 0). A counter that ever drifted (an operator deleting
/// entries by hand) heals the next time the stage is idle.
enum IngestFunctions {
    static let libraryName = "tollgate_ingest_v2"
    static let enqueueFunction = "tg_ingest_v2_enqueue"
    static let createOrderFunction = "tg_ingest_v2_create_order"
    static let settleBacklogFunction = "tg_ingest_v2_settle_backlog"
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

    /// Loads (or replaces) the library.
    static func load(on redis: any RedisCommandExecutor) async throws {
        let name = try await redis.functionLoad(source)
        guard name == libraryName else {
            throw PipelineError.functionLoadFailed("loaded library is named \(name), expected \(libraryName)")
        }
    }

    /// The `FCALL` that enqueues `job` (which carries its dedupe key and counted bytes) with its `queued` status.
    static func enqueueCommand(job: Job, status: JobStatus, keys: Keys, limits: Limits, nowMilliseconds: Int64) -> RedisCommand {
        var redisKeys = [keys.jobs().stream, keys.job(job.id), job.dedupeKey ?? keys.partitionKey(0, "dedupe", job.id),
                         keys.backlog()]
        if let user = job.userID, limits.inFlightCap > 0 { redisKeys.append(keys.inFlight(user: user)) }
        var arguments: [[UInt8]] = [Array(enqueueFunction.utf8), Array(String(redisKeys.count).utf8)]
        arguments += redisKeys.map { Array($0.utf8) }
        for text in [job.id, String(dedupeSeconds), String(JobStatus.retentionSeconds), job.source.rawValue,
                     String(job.countedBytes ?? job.payload.count), String(limits.maxJobs), String(limits.maxBytes),
                     String(limits.inFlightCap), keys.job(""), String(nowMilliseconds)] {
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
        return RedisCommand(arguments: [Array("FCALL".utf8)] + arguments)
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
        let redisKeys = [keys.order(user: order.userID, orderNo: order.orderNo), keys.orders(user: order.userID),
                         keys.pendingOrders(user: order.userID), keys.appAccountToken(order.appAccountToken)]
        var arguments = [order.orderNo, String(order.createdAtMilliseconds), String(lifetime.milliseconds), String(cap),
                         order.userID, String(order.fields.count)]
        for (name, value) in order.fields { arguments += [name, value] }
        var reply = try await redis.fcall(createOrderFunction, keys: redisKeys, arguments: arguments)
        if case .error(let text) = reply, isMissingFunction(text) {
            try await load(on: redis)
            reply = try await redis.fcall(createOrderFunction, keys: redisKeys, arguments: arguments)
        }
        guard let parts = reply.array, let created = parts.first?.int else {
            throw PipelineError.unexpectedReply("\(createOrderFunction) returned \(reply)")
        }
        if created == 1 { return .created }
        let wait = parts.count > 1 ? parts[1].int ?? 0 : 0
        return .tooManyPending(retryAfter: .milliseconds(max(1000, wait)))
    }

    /// Resets the backlog counters when nothing is unfinished; true when it did.
    static func settleBacklog(keys: Keys, on redis: any RedisCommandExecutor) async throws -> Bool {
        let jobs = keys.jobs()
        let reply = try await redis.fcall(settleBacklogFunction, keys: [jobs.stream, jobs.retry, keys.backlog()], arguments: [])
        return reply.int == 1
    }

    /// Whether an error reply says the library is missing (e.g. Redis restarted without its data).
    static func isMissingFunction(_ text: String) -> Bool {
        text.contains("Function not found") || text.contains("function not found")
    }

    static let source = #"""
#!lua name=tollgate_ingest_v2
-- Tollgate ingest functions, version 2. A changed contract gets a new library and function names.

local function fail(message)
  return error({ err = 'ERR tollgate_ingest_v2: ' .. message })
end

local function count_at(argv, i)
  local n = tonumber(argv[i])
  if n == nil or n < 0 or n ~= math.floor(n) then fail('bad number at ARGV[' .. i .. ']') end
  return n
end

local FINAL = { fulfilled = true, rejected = true, dead = true }

-- Drops from a user's in-flight zset (member jobId, score enqueued at) the jobs that are final, gone, or older
-- than the horizon (a day: the verifier gives up on a job well before); returns how many are left.
local function in_flight(key, job_prefix, now, horizon)
  local members = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  local left = 0
  for i = 1, #members, 2 do
    local id, at = members[i], tonumber(members[i + 1])
    local state = redis.call('HGET', job_prefix .. id, 'state')
    if not state or FINAL[state] or at < now - horizon then
      redis.call('ZREM', key, id)
    else
      left = left + 1
    end
  end
  return left
end

-- Parses every field before anything is written: a function's writes are not rolled back on error.
local function enqueue(keys, argv)
  local job_id, source = argv[1], argv[4]
  local bytes, max_jobs, max_bytes, cap = count_at(argv, 5), count_at(argv, 6), count_at(argv, 7), count_at(argv, 8)
  local job_prefix, now = argv[9], count_at(argv, 10)
  local i = 11
  local n = count_at(argv, i)
  if n == 0 or i + 2 * n > #argv then fail('bad job fields') end
  local xadd = { 'XADD', keys[1], '*' }
  for j = 1, 2 * n do xadd[#xadd + 1] = argv[i + j] end
  i = i + 2 * n + 1
  local m = count_at(argv, i)
  if m == 0 or i + 2 * m ~= #argv then fail('bad status fields') end
  local hset = { 'HSET', keys[2] }
  for j = 1, 2 * m do hset[#hset + 1] = argv[i + j] end

  local existing = redis.call('GET', keys[3])
  if existing then return { existing, 0 } end
  local held = redis.call('HMGET', keys[4], source .. '.jobs', source .. '.bytes')
  local jobs, held_bytes = tonumber(held[1]) or 0, tonumber(held[2]) or 0
  if (max_jobs > 0 and jobs >= max_jobs) or (max_bytes > 0 and held_bytes + bytes > max_bytes) then
    return { '', -1, 'backlog' }
  end
  if keys[5] and cap > 0 and in_flight(keys[5], job_prefix, now, 86400000) >= cap then
    return { '', -1, 'in_flight' }
  end
  redis.call('SET', keys[3], job_id, 'EX', argv[2])
  redis.call(unpack(xadd))
  redis.call(unpack(hset))
  redis.call('EXPIRE', keys[2], argv[3])
  redis.call('HINCRBY', keys[4], source .. '.jobs', 1)
  redis.call('HINCRBY', keys[4], source .. '.bytes', bytes)
  if keys[5] then
    redis.call('ZADD', keys[5], now, job_id)
    redis.call('PEXPIRE', keys[5], 86400000)
  end
  return { job_id, 1 }
end

local function create_order(keys, argv)
  local order_no, now, ttl, cap, user = argv[1], count_at(argv, 2), count_at(argv, 3), count_at(argv, 4), argv[5]
  local n = count_at(argv, 6)
  if n == 0 or 6 + 2 * n ~= #argv then fail('bad order fields') end
  if ttl == 0 or cap == 0 then fail('bad order limits') end
  for _, expired in ipairs(redis.call('ZRANGE', keys[3], '-inf', now, 'BYSCORE')) do
    redis.call('ZREM', keys[2], expired)
  end
  redis.call('ZREMRANGEBYSCORE', keys[3], '-inf', now)
  if redis.call('ZCARD', keys[3]) >= cap then
    local oldest = redis.call('ZRANGE', keys[3], 0, 0, 'WITHSCORES')
    return { 0, math.max(0, (tonumber(oldest[2]) or now) - now) }
  end
  local hset = { 'HSET', keys[1] }
  for j = 1, 2 * n do hset[#hset + 1] = argv[6 + j] end
  redis.call(unpack(hset))
  redis.call('PEXPIRE', keys[1], ttl)
  redis.call('ZADD', keys[2], now, order_no)
  redis.call('ZADD', keys[3], now + ttl, order_no)
  redis.call('HSET', keys[4], 'user', user, 'order.no', order_no)
  redis.call('PEXPIRE', keys[4], ttl)
  return { 1 }
end

local function field(flat, name)
  for i = 1, #flat - 1, 2 do
    if flat[i] == name then return flat[i + 1] end
  end
  return nil
end

local function settle_backlog(keys, argv)
  if redis.call('EXISTS', keys[1]) == 0 then
    redis.call('DEL', keys[3])
    return 1
  end
  if redis.call('ZCARD', keys[2]) > 0 then return 0 end
  local last = field(redis.call('XINFO', 'STREAM', keys[1]), 'last-generated-id')
  local groups = redis.call('XINFO', 'GROUPS', keys[1])
  if #groups == 0 then return 0 end
  for _, group in ipairs(groups) do
    if tonumber(field(group, 'pending')) ~= 0 or field(group, 'last-delivered-id') ~= last then return 0 end
  end
  redis.call('DEL', keys[3])
  return 1
end

redis.register_function('tg_ingest_v2_enqueue', enqueue)
redis.register_function('tg_ingest_v2_settle_backlog', settle_backlog)
redis.register_function('tg_ingest_v2_create_order', create_order)
"""#
}
