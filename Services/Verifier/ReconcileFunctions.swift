import Pipeline
import Redis

/// The `tollgate_reconcile_v1` Redis Function library: the reconciler's leader lease, its fenced cursor
/// writes, and the two ways it hands work to the pipeline. Every key of one call shares the `{p0}` slot.
///
/// - `tg_reconcile_v1_acquire` KEYS: lease  ARGV: token, ttlMs → 1 when the lease is (now) held by `token`
///   (taken with `SET NX PX`, or renewed with `PEXPIRE` when `token` already holds it), else 0.
/// - `tg_reconcile_v1_release` KEYS: lease  ARGV: token → 1 when `token` held it and it was deleted.
/// - `tg_reconcile_v1_write` KEYS: lease, hash  ARGV: token, n, (field value)×n, m, field×m → 1 after
///   `HSET`ting the pairs and `HDEL`ing the fields, only while `token` holds the lease (a leader whose lease
///   ran out can never move the checkpoint); else 0.
/// - `tg_reconcile_v1_enqueue` KEYS: jobs stream, job status hash, seen key  ARGV: jobId, seenTTLSeconds,
///   statusTTLSeconds, n, (field value)×n of the job, m, (field value)×m of the `queued` status →
///   `[jobId, 1]` after `SET seen jobId NX EX`, `XADD` and `HSET`; `[earlier jobId, 0]` when the seen key
///   existed (nothing written) — running twice, or two leaders one after the other, enqueue once.
/// - `tg_reconcile_v1_emit` KEYS: verified stream, job status hash  ARGV: statusTTLSeconds, n, (field
///   value)×n of the verified entry, m, (field value)×m of the status → 1 after `XADD` and `HSET`: a
///   sweeper answer, verified in the verifier, handed to the fulfiller like any verified job.
enum ReconcileFunctions {
    static let libraryName = "tollgate_reconcile_v1"

    static func load(on redis: any RedisCommandExecutor) async throws {
        let name = try await redis.functionLoad(librarySource)
        guard name == libraryName else {
            throw PipelineError.functionLoadFailed("loaded library is named \(name), expected \(libraryName)")
        }
    }

    static func acquire(on redis: any RedisCommandExecutor, lease: String, token: String, ttl: Duration) async throws -> Bool {
        try await redis.fcall("tg_reconcile_v1_acquire", keys: [lease], arguments: [token, ttl.milliseconds]).int == 1
    }

    @discardableResult
    static func release(on redis: any RedisCommandExecutor, lease: String, token: String) async throws -> Bool {
        try await redis.fcall("tg_reconcile_v1_release", keys: [lease], arguments: [token]).int == 1
    }

    /// Sets `fields` and deletes `removing` in `hash` while `token` holds `lease`; false when it does not.
    static func write(
        on redis: any RedisCommandExecutor, lease: String, token: String, hash: String,
        fields: [(String, String)], removing: [String] = []
    ) async throws -> Bool {
        var arguments: [any RedisArgumentConvertible] = [token, fields.count]
        for (name, value) in fields { arguments += [name, value] }
        arguments.append(removing.count)
        arguments += removing
        return try await redis.fcall("tg_reconcile_v1_write", keys: [lease, hash], arguments: arguments).int == 1
    }

    /// Enqueues `job` unless `seenKey` says it already was; returns the job id that carries it and whether
    /// this call created it.
    static func enqueue(
        on redis: any RedisCommandExecutor, keys: Keys, job: Job, seenKey: String, seenTTLSeconds: Int
    ) async throws -> (jobID: String, created: Bool) {
        let status = JobStatus(jobID: job.id, state: .queued, kind: job.kind, updatedAtMilliseconds: job.receivedAtMilliseconds)
        var arguments: [[UInt8]] = [Array(job.id.utf8), Array(String(seenTTLSeconds).utf8), Array(String(JobStatus.retentionSeconds).utf8)]
        arguments += flatten(job.fields)
        arguments += flatten(status.fields.map { ($0.0, Array($0.1.utf8)) })
        let reply = try await redis.fcall(
            "tg_reconcile_v1_enqueue", keys: [keys.jobs().stream, keys.job(job.id), seenKey], arguments: arguments)
        guard let parts = reply.array, parts.count == 2, let id = parts[0].string, let created = parts[1].int else {
            throw PipelineError.unexpectedReply("tg_reconcile_v1_enqueue returned \(reply)")
        }
        return (id, created == 1)
    }

    /// Hands a verified event to the fulfiller with its job status (`verifying`, `verified.at`).
    static func emit(on redis: any RedisCommandExecutor, keys: Keys, event: PurchaseEvent, nowMilliseconds: Int64) async throws {
        var status = JobStatus(jobID: event.jobId, state: .verifying, kind: event.kind, userID: event.userId,
                               updatedAtMilliseconds: nowMilliseconds).fields
        status.append(("verified.at", String(nowMilliseconds)))
        status.append(("source", event.source.rawValue))
        var arguments: [[UInt8]] = [Array(String(JobStatus.retentionSeconds).utf8)]
        arguments += flatten(try event.streamFields())
        arguments += flatten(status.map { ($0.0, Array($0.1.utf8)) })
        _ = try await redis.fcall(
            "tg_reconcile_v1_emit", keys: [keys.verified().stream, keys.job(event.jobId)], arguments: arguments)
    }

    private static func flatten(_ fields: [(String, [UInt8])]) -> [[UInt8]] {
        var out: [[UInt8]] = [Array(String(fields.count).utf8)]
        for (name, value) in fields {
            out.append(Array(name.utf8))
            out.append(value)
        }
        return out
    }

    static let librarySource: String = #"""
#!lua name=tollgate_reconcile_v1
-- Tollgate reconciler functions, version 1. A changed contract gets a new library and function names.

local function fail(message) return error({ err = 'ERR tollgate_reconcile_v1: ' .. message }) end

-- Reads "n, (name value)×n" from argv at i; returns a flat list and the next index.
local function pairs_at(argv, i)
  local n = tonumber(argv[i])
  if n == nil or n < 0 or n ~= math.floor(n) or i + 2 * n > #argv then fail('bad count at ARGV[' .. i .. ']') end
  local out = {}
  for j = 1, 2 * n do out[j] = argv[i + j] end
  return out, i + 2 * n + 1
end

local function acquire(keys, argv)
  local ttl = tonumber(argv[2])
  if argv[1] == nil or argv[1] == '' or ttl == nil or ttl < 1 then fail('bad token or ttl') end
  local holder = redis.call('GET', keys[1])
  if not holder then
    redis.call('SET', keys[1], argv[1], 'PX', ttl)
    return 1
  end
  if holder == argv[1] then
    redis.call('PEXPIRE', keys[1], ttl)
    return 1
  end
  return 0
end

local function release(keys, argv)
  if redis.call('GET', keys[1]) == argv[1] then
    redis.call('DEL', keys[1])
    return 1
  end
  return 0
end

local function write(keys, argv)
  local set, i = pairs_at(argv, 2)
  local m = tonumber(argv[i])
  if m == nil or i + m ~= #argv then fail('bad field list') end
  if redis.call('GET', keys[1]) ~= argv[1] then return 0 end
  if #set > 0 then
    local cmd = { 'HSET', keys[2] }
    for j = 1, #set do cmd[#cmd + 1] = set[j] end
    redis.call(unpack(cmd))
  end
  for j = 1, m do redis.call('HDEL', keys[2], argv[i + j]) end
  return 1
end

-- XADDs the field/value list `entry` to `stream` and HSETs `status` on `hash`, which expires after `ttl` seconds.
local function append_with_status(stream, entry, hash, status, ttl)
  local xadd = { 'XADD', stream, '*' }
  for j = 1, #entry do xadd[#xadd + 1] = entry[j] end
  redis.call(unpack(xadd))
  local hset = { 'HSET', hash }
  for j = 1, #status do hset[#hset + 1] = status[j] end
  redis.call(unpack(hset))
  redis.call('EXPIRE', hash, ttl)
end

local function enqueue(keys, argv)
  local job, i = pairs_at(argv, 4)
  local status, last = pairs_at(argv, i)
  if #job == 0 or #status == 0 or last ~= #argv + 1 then fail('bad job or status fields') end
  local ok = redis.call('SET', keys[3], argv[1], 'NX', 'EX', argv[2])
  if not ok then return { redis.call('GET', keys[3]), 0 } end
  append_with_status(keys[1], job, keys[2], status, argv[3])
  return { argv[1], 1 }
end

local function emit(keys, argv)
  local entry, i = pairs_at(argv, 2)
  local status, last = pairs_at(argv, i)
  if #entry == 0 or #status == 0 or last ~= #argv + 1 then fail('bad entry or status fields') end
  append_with_status(keys[1], entry, keys[2], status, argv[1])
  return 1
end

redis.register_function('tg_reconcile_v1_acquire', acquire)
redis.register_function('tg_reconcile_v1_release', release)
redis.register_function('tg_reconcile_v1_write', write)
redis.register_function('tg_reconcile_v1_enqueue', enqueue)
redis.register_function('tg_reconcile_v1_emit', emit)
"""#
}
