-- The reconciler's functions (ReconcileFunctions.swift): its lease, its cursors, and the jobs it recovers from
-- Apple's history (enqueued like ingest's, with their first status).

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

register('acquire', acquire)
register('release', release)
register('write', write)
register('enqueue', enqueue)
register('emit', emit)
