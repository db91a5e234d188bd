import Pipeline
import Redis

/// The `tollgate_deadletter_v2` Redis Function library, used by `tollctl dead redrive`.
///
/// - `tg_dead_v2_redrive`  KEYS: dead-letter stream, its source stream, job status hash, backlog hash
///   ARGV: dead entry id, job id, nowMs, retentionSeconds
///   Copies the dead entry's original fields (without `source.*`, `reason`, `attempts`, `dead.at` and the
///   runtime's `pipeline.*`, so attempts start again at 1) onto the source stream, deletes the dead entry
///   and sets the job's status back to `queued` (clearing `reason`, `message`, `attempt`, `next.at`) — in
///   one atomic step. A job counted in its source's backlog (`job.bytes`) is counted again, since its dead
///   letter took it off. Returns the new entry id, or nil when the dead entry is gone (redriven already).
enum DeadLetterFunctions {
    static let libraryName = "tollgate_deadletter_v2"
    static let redriveFunction = "tg_dead_v2_redrive"

    static func load(on redis: any RedisCommandExecutor) async throws {
        let name = try await redis.functionLoad(librarySource)
        guard name == libraryName else {
            throw PipelineError.functionLoadFailed("loaded library is named \(name), expected \(libraryName)")
        }
    }

    /// Redrives one dead entry of `keys`; returns the new jobs-stream id, or nil when it was gone.
    static func redrive(
        on redis: any RedisCommandExecutor, keys: StreamKeys, statusKey: String, backlogKey: String, deadID: String,
        jobID: String, nowMilliseconds: Int64
    ) async throws -> String? {
        let reply = try await redis.fcall(
            redriveFunction, keys: [keys.deadLetter, keys.stream, statusKey, backlogKey],
            arguments: [deadID, jobID, String(nowMilliseconds), String(JobStatus.retentionSeconds)])
        return reply.isNull ? nil : reply.string
    }

    static let librarySource: String = #"""
#!lua name=tollgate_deadletter_v2
-- Tollgate dead-letter operations, version 2.

local DROP = { ['source.stream'] = true, ['source.id'] = true, ['reason'] = true, ['attempts'] = true,
               ['dead.at'] = true, ['pipeline.attempt'] = true, ['pipeline.error'] = true }

-- KEYS: dead stream, source stream, job status hash, backlog hash   ARGV: dead id, job id, nowMs, retentionSeconds
local function redrive(keys, argv)
  local found = redis.call('XRANGE', keys[1], argv[1], argv[1])
  if #found ~= 1 then return nil end
  local fields = found[1][2]
  local cmd = { 'XADD', keys[2], '*' }
  local source = nil
  local job = nil
  local counted, origin = nil, nil
  for j = 1, #fields, 2 do
    local name = fields[j]
    if name == 'source.stream' then source = fields[j + 1] end
    if name == 'job.id' then job = fields[j + 1] end
    if name == 'job.bytes' then counted = tonumber(fields[j + 1]) end
    if name == 'job.source' then origin = fields[j + 1] end
    if not DROP[name] then
      cmd[#cmd + 1] = name
      cmd[#cmd + 1] = fields[j + 1]
    end
  end
  if source ~= nil and source ~= keys[2] then
    return error({ err = 'ERR tollgate_deadletter_v2: entry came from ' .. source .. ', not ' .. keys[2] })
  end
  if #cmd == 3 then
    return error({ err = 'ERR tollgate_deadletter_v2: dead entry ' .. argv[1] .. ' has no original fields' })
  end
  local id = redis.call(unpack(cmd))
  redis.call('XDEL', keys[1], argv[1])
  if counted and origin then
    redis.call('HINCRBY', keys[4], origin .. '.jobs', 1)
    redis.call('HINCRBY', keys[4], origin .. '.bytes', string.format('%d', counted))
  end
  if job ~= nil and job == argv[2] then
    redis.call('HDEL', keys[3], 'reason', 'message', 'attempt', 'next.at')
    redis.call('HSET', keys[3], 'state', 'queued', 'updated.at', argv[3])
    redis.call('EXPIRE', keys[3], tonumber(argv[4]))
  end
  return id
end

redis.register_function('tg_dead_v2_redrive', redrive)
"""#
}
