-- Fleet-wide token buckets (RateLimitFunctions.swift). One bucket per key: a hash with 'tokens' and 'at' (ms),
-- refilled by the Redis server's own clock (TIME), so that replicas with skewed clocks still share one rate.

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

register('take', take)
