-- Ingest's functions (IngestFunctions.swift): the atomic enqueue of a job with its budgets, the creation of an
-- order, and the settling of the sources' backlog counters.

-- Drops from a user's in-flight zset (member jobId, score enqueued at) the jobs that are final, gone, or older
-- than the horizon (a day: the verifier gives up on a job well before); returns how many are left.
local function in_flight(key, job_prefix, now, horizon)
  local members = redis.call('ZRANGE', key, 0, -1, 'WITHSCORES')
  local left = 0
  for i = 1, #members, 2 do
    local id, at = members[i], tonumber(members[i + 1])
    local state = redis.call('HGET', job_prefix .. id, 'state')
    if not state or is_final(state) or at < now - horizon then
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
  local job, i = pairs_at(argv, 11)
  local status, last = pairs_at(argv, i)
  if #job == 0 or #status == 0 or last ~= #argv + 1 then fail('bad job or status fields') end

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
  append_with_status(keys[1], job, keys[2], status, argv[3])
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
  if keys[4] then
    redis.call('HSET', keys[4], 'user', user, 'order.no', order_no)
    redis.call('PEXPIRE', keys[4], ttl)
  end
  return { 1 }
end

local function field(flat, name)
  for i = 1, #flat - 1, 2 do
    if flat[i] == name then return flat[i + 1] end
  end
  return nil
end

local function settle_backlog(keys)
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

register('enqueue', enqueue)
register('settle_backlog', settle_backlog)
register('create_order', create_order)
