import Pipeline
import Redis

/// The `tollgate_ingest_v1` Redis Function library: one atomic enqueue per job.
///
/// `tg_ingest_v1_enqueue` — KEYS: jobs stream, job status hash[, dedupe key]
/// ARGV: jobId, dedupeTTLSeconds, statusTTLSeconds, n, (field value)×n of the job, m, (field value)×m of the
/// `queued` status. With a dedupe key it first does `SET dedupe jobId NX EX ttl`; if the key existed it
/// changes nothing and returns the job id stored there. Otherwise it `XADD`s the job and `HSET`s (with
/// `EXPIRE`) its status. Returns `[jobId, 1 created | 0 duplicate]`. All keys share the jobs stream's slot.
enum IngestFunctions {
    static let libraryName = "tollgate_ingest_v1"
    static let enqueueFunction = "tg_ingest_v1_enqueue"
    /// How long the same submission from the same user maps to the same job.
    static let dedupeSeconds = 86_400

    /// Loads (or replaces) the library.
    static func load(on redis: any RedisCommandExecutor) async throws {
        let name = try await redis.functionLoad(source)
        guard name == libraryName else {
            throw PipelineError.functionLoadFailed("loaded library is named \(name), expected \(libraryName)")
        }
    }

    /// The `FCALL` that enqueues `job` with its `queued` status, deduplicated by `dedupeKey` when given.
    static func enqueueCommand(job: Job, status: JobStatus, keys: Keys, dedupeKey: String?) -> RedisCommand {
        var redisKeys = [keys.jobs().stream, keys.job(job.id)]
        if let dedupeKey { redisKeys.append(dedupeKey) }
        var arguments: [[UInt8]] = [
            Array(enqueueFunction.utf8), Array(String(redisKeys.count).utf8),
        ]
        arguments += redisKeys.map { Array($0.utf8) }
        arguments.append(Array(job.id.utf8))
        arguments.append(Array(String(dedupeSeconds).utf8))
        arguments.append(Array(String(JobStatus.retentionSeconds).utf8))
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

    /// Whether an error reply says the library is missing (e.g. Redis restarted without its data).
    static func isMissingFunction(_ text: String) -> Bool {
        text.contains("Function not found") || text.contains("function not found")
    }

    static let source = #"""
#!lua name=tollgate_ingest_v1
-- Tollgate ingest functions, version 1. A changed contract gets a new library and function names.

local function count_at(argv, i)
  local n = tonumber(argv[i])
  if n == nil or n < 0 or n ~= math.floor(n) then
    return error({ err = 'ERR tollgate_ingest_v1: bad count at ARGV[' .. i .. ']' })
  end
  return n
end

-- Parses every field before anything is written: a function's writes are not rolled back on error.
local function enqueue(keys, argv)
  local job_id = argv[1]
  local i = 4
  local n = count_at(argv, i)
  if n == 0 or i + 2 * n > #argv then return error({ err = 'ERR tollgate_ingest_v1: bad job fields' }) end
  local xadd = { 'XADD', keys[1], '*' }
  for j = 1, 2 * n do xadd[#xadd + 1] = argv[i + j] end
  i = i + 2 * n + 1
  local m = count_at(argv, i)
  if m == 0 or i + 2 * m ~= #argv then return error({ err = 'ERR tollgate_ingest_v1: bad status fields' }) end
  local hset = { 'HSET', keys[2] }
  for j = 1, 2 * m do hset[#hset + 1] = argv[i + j] end
  if keys[3] then
    local ok = redis.call('SET', keys[3], job_id, 'NX', 'EX', argv[2])
    if not ok then
      return { redis.call('GET', keys[3]), 0 }
    end
  end
  redis.call(unpack(xadd))
  redis.call(unpack(hset))
  redis.call('EXPIRE', keys[2], argv[3])
  return { job_id, 1 }
end

redis.register_function('tg_ingest_v1_enqueue', enqueue)
"""#
}
