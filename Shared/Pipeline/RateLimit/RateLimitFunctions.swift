import Redis

/// The `tollgate_ratelimit_v1` Redis Function library: one token bucket per key, refilled by the Redis
/// server's own clock (`TIME`), so that replicas with skewed clocks still share one rate.
///
/// - `tg_rl_v1_take`  KEYS: bucket  ARGV: ratePerSecond, capacity, requested
///   → `[granted (1/0), waitMilliseconds]`: on a refusal, how long until enough tokens are there.
public enum RateLimitFunctions {
    public static let libraryName = "tollgate_ratelimit_v1"
    public static let takeFunction = "tg_rl_v1_take"

    /// Loads (or replaces) the library.
    public static func load(on redis: any RedisCommandExecutor) async throws {
        let name = try await redis.functionLoad(librarySource)
        guard name == libraryName else {
            throw PipelineError.functionLoadFailed("loaded library is named \(name), expected \(libraryName)")
        }
    }

    /// Takes `requested` tokens from `bucket` if it holds them; returns whether it did and, if not, how
    /// long to wait.
    public static func take(
        on redis: any RedisCommandExecutor, bucket: TokenBucket, requested: Double = 1
    ) async throws -> (granted: Bool, wait: Duration) {
        let reply = try await redis.fcall(
            takeFunction, keys: [bucket.key],
            arguments: [String(bucket.ratePerSecond), String(bucket.capacity), String(requested)])
        guard let parts = reply.array, parts.count == 2, let granted = parts[0].int, let wait = parts[1].int else {
            throw PipelineError.unexpectedReply("\(takeFunction) returned \(reply)")
        }
        return (granted == 1, .milliseconds(max(0, wait)))
    }

    /// The library source passed to `FUNCTION LOAD REPLACE`.
    public static let librarySource: String = #"""
#!lua name=tollgate_ratelimit_v1
-- Tollgate fleet-wide token buckets, version 1. One bucket per key: a hash with 'tokens' and 'at' (ms).

local function fail(message)
  return error({ err = 'ERR tollgate_ratelimit_v1: ' .. message })
end

-- KEYS: bucket   ARGV: ratePerSecond, capacity, requested   -> { granted 1/0, waitMs }
local function take(keys, argv)
  local rate = tonumber(argv[1])
  local capacity = tonumber(argv[2])
  local requested = tonumber(argv[3])
  if rate == nil or rate <= 0 then fail('bad rate') end
  if capacity == nil or capacity < 1 then fail('bad capacity') end
  if requested == nil or requested <= 0 or requested > capacity then fail('bad requested count') end
  local time = redis.call('TIME')
  local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
  local state = redis.call('HMGET', keys[1], 'tokens', 'at')
  local tokens = tonumber(state[1])
  local at = tonumber(state[2])
  if tokens == nil or at == nil then
    tokens = capacity
    at = now
  end
  if now > at then
    tokens = math.min(capacity, tokens + (now - at) * rate / 1000)
    at = now
  end
  local granted = 0
  local wait = 0
  if tokens >= requested then
    tokens = tokens - requested
    granted = 1
  else
    wait = math.ceil((requested - tokens) * 1000 / rate)
  end
  redis.call('HSET', keys[1], 'tokens', string.format('%.6f', tokens), 'at', string.format('%d', at))
  redis.call('PEXPIRE', keys[1], math.ceil(capacity * 1000 / rate) + 1000)
  return { granted, wait }
end

redis.register_function('tg_rl_v1_take', take)
"""#
}
