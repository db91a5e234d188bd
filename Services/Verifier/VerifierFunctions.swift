import Pipeline
import Redis

/// The `tollgate_verifier_v1` Redis Function library.
///
/// - `tg_verifier_v1_mark_verifying`  KEYS: job status hash  ARGV: attempt, nowMs, retentionSeconds
///   Sets `state=verifying`, `attempt`, `updated.at` unless the job is already final (`fulfilled`,
///   `rejected`, `dead`) or verified (`verified.at` set) — so a late duplicate delivery never moves a
///   status backwards. Returns 1 when it wrote, 0 when it left the status alone.
enum VerifierFunctions {
    static let libraryName = "tollgate_verifier_v1"
    static let markVerifyingFunction = "tg_verifier_v1_mark_verifying"

    static func load(on redis: any RedisCommandExecutor) async throws {
        let name = try await redis.functionLoad(librarySource)
        guard name == libraryName else {
            throw PipelineError.functionLoadFailed("loaded library is named \(name), expected \(libraryName)")
        }
    }

    @discardableResult
    static func markVerifying(on redis: any RedisCommandExecutor, key: String, attempt: Int, nowMilliseconds: Int64) async throws -> Bool {
        let reply = try await redis.fcall(
            markVerifyingFunction, keys: [key],
            arguments: [String(attempt), String(nowMilliseconds), String(JobStatus.retentionSeconds)])
        return reply.int == 1
    }

    static let librarySource: String = #"""
#!lua name=tollgate_verifier_v1
-- Tollgate verifier functions, version 1.

-- KEYS: job status hash   ARGV: attempt, nowMs, retentionSeconds
local function mark_verifying(keys, argv)
  local state = redis.call('HGET', keys[1], 'state')
  if state == 'fulfilled' or state == 'rejected' or state == 'dead' then return 0 end
  if redis.call('HEXISTS', keys[1], 'verified.at') == 1 then return 0 end
  redis.call('HSET', keys[1], 'state', 'verifying', 'attempt', argv[1], 'updated.at', argv[2])
  redis.call('EXPIRE', keys[1], tonumber(argv[3]))
  return 1
end

redis.register_function('tg_verifier_v1_mark_verifying', mark_verifying)
"""#
}
