-- Pipeline functions: each stage's hand-off, acknowledged atomically with its writes (PipelineFunctions.swift).
--
--
-- Writes list (shared by the ack_* functions), starting at ARGV[i]:
--   <count>, then per write one of:
--     'XADD'    <keyIndex> <fieldCount> <field> <value> ...
--     'HSET'    <keyIndex> <expireSeconds, 0 = none> <fieldCount> <field> <value> ...
--     'STATUS'  <keyIndex> <expireSeconds> <jobId> <channel, '' = none> <fieldCount> <field> <value> ...
--               <clearCount> <field> ...   (a job's status, through jobs.lua's write_status: the one writer)
--     'PUBLISH' <channel> <message>
--     'HINCRBY' <keyIndex> <field> <integer delta>
--     'EXPIRE'  <keyIndex> <seconds>   (EXPIRE … LT: only ever shortens a key's life; no-op on a missing key)
--   keyIndex is an index into KEYS (never a key name), so every key the function touches is declared.

local RESERVED = { ['pipeline.attempt'] = true, ['pipeline.error'] = true }

local function key_at(keys, argv, i, first)
  local index = count_at(argv, i, 'key index')
  if index < first or index > #keys then fail('key index ' .. index .. ' out of range') end
  return keys[index]
end

-- Parses and validates every write before anything is changed, so a malformed list never half-applies.
local function parse_writes(keys, argv, i, first)
  local writes = {}
  local count = count_at(argv, i, 'write count')
  i = i + 1
  for _ = 1, count do
    local op = argv[i]
    if op == 'XADD' then
      local key = key_at(keys, argv, i + 1, first)
      local n = count_at(argv, i + 2, 'field count')
      if n == 0 then fail('XADD needs fields') end
      if i + 2 + 2 * n > #argv then fail('XADD fields run past ARGV') end
      local cmd = { 'XADD', key, '*' }
      for j = 1, 2 * n do cmd[#cmd + 1] = argv[i + 2 + j] end
      writes[#writes + 1] = { cmd }
      i = i + 3 + 2 * n
    elseif op == 'HSET' then
      local key = key_at(keys, argv, i + 1, first)
      local ttl = count_at(argv, i + 2, 'expire seconds')
      local n = count_at(argv, i + 3, 'field count')
      if n == 0 then fail('HSET needs fields') end
      if i + 3 + 2 * n > #argv then fail('HSET fields run past ARGV') end
      local cmd = { 'HSET', key }
      for j = 1, 2 * n do cmd[#cmd + 1] = argv[i + 3 + j] end
      local write = { cmd }
      if ttl > 0 then write[2] = { 'EXPIRE', key, ttl } end
      writes[#writes + 1] = write
      i = i + 4 + 2 * n
    elseif op == 'STATUS' then
      local key = key_at(keys, argv, i + 1, first)
      local ttl = count_at(argv, i + 2, 'expire seconds')
      if ttl == 0 then fail('STATUS needs a retention') end
      local job, channel = argv[i + 3], argv[i + 4]
      local n = count_at(argv, i + 5, 'field count')
      if i + 5 + 2 * n + 1 > #argv then fail('STATUS fields run past ARGV') end
      local fields = {}
      for j = 1, 2 * n do fields[j] = argv[i + 5 + j] end
      local m = count_at(argv, i + 6 + 2 * n, 'clear count')
      if i + 6 + 2 * n + m > #argv then fail('STATUS clears run past ARGV') end
      local clear = {}
      for j = 1, m do clear[j] = argv[i + 6 + 2 * n + j] end
      check_status(fields, clear)
      writes[#writes + 1] = { status = { key, job, fields, clear, ttl, channel } }
      i = i + 7 + 2 * n + m
    elseif op == 'HINCRBY' then
      local key = key_at(keys, argv, i + 1, first)
      if i + 3 > #argv then fail('HINCRBY needs a field and a delta') end
      local delta = tonumber(argv[i + 3])
      if delta == nil or delta ~= math.floor(delta) then fail('HINCRBY delta is not an integer') end
      writes[#writes + 1] = { { 'HINCRBY', key, argv[i + 2], argv[i + 3] } }
      i = i + 4
    elseif op == 'EXPIRE' then
      local key = key_at(keys, argv, i + 1, first)
      local seconds = count_at(argv, i + 2, 'expire seconds')
      if seconds == 0 then fail('EXPIRE needs a positive time') end
      writes[#writes + 1] = { { 'EXPIRE', key, argv[i + 2], 'LT' } }
      i = i + 3
    elseif op == 'PUBLISH' then
      if i + 2 > #argv then fail('PUBLISH needs a channel and a message') end
      writes[#writes + 1] = { { 'PUBLISH', argv[i + 1], argv[i + 2] } }
      i = i + 3
    else
      fail('unknown write ' .. tostring(op))
    end
  end
  if i <= #argv then fail('unexpected ARGV after the writes') end
  return writes
end

local function apply_writes(writes)
  for _, write in ipairs(writes) do
    if write.status then
      write_status(unpack(write.status))
    else
      for _, cmd in ipairs(write) do redis.call(unpack(cmd)) end
    end
  end
end

-- The entry's fields as a flat list, without the runtime's own fields.
local function entry_fields(stream, id)
  local found = redis.call('XRANGE', stream, id, id)
  local flat = {}
  if #found == 1 then
    local fields = found[1][2]
    for j = 1, #fields, 2 do
      if not RESERVED[fields[j]] then
        flat[#flat + 1] = fields[j]
        flat[#flat + 1] = fields[j + 1]
      end
    end
  end
  return flat
end

-- Every ack function but `ack_shared` acknowledges through jobs.lua's `acknowledge` (XACK gate, then XDEL): the
-- streams they serve have one consumer group each.

-- KEYS: stream, write keys...   ARGV: group, id, writes...
-- Returns 1 when the entry was acknowledged here and the writes applied, 0 when it was already acknowledged.
local function ack_write(keys, argv)
  local writes = parse_writes(keys, argv, 3, 2)
  return acknowledge(keys[1], argv[1], argv[2], function() apply_writes(writes) end) and 1 or 0
end

-- KEYS: stream, retry zset, write keys...   ARGV: group, id, dueMs, nextAttempt, error, writes...
local function ack_retry(keys, argv)
  local due = tonumber(argv[3])
  if due == nil then fail('bad due time') end
  local attempt = count_at(argv, 4, 'attempt')
  local writes = parse_writes(keys, argv, 6, 3)
  local fields = entry_fields(keys[1], argv[2])
  return acknowledge(keys[1], argv[1], argv[2], function()
    local member = cmsgpack.pack({ id = argv[2], fields = fields, attempt = attempt, error = argv[5] })
    redis.call('ZADD', keys[2], due, member)
    apply_writes(writes)
  end) and 1 or 0
end

-- KEYS: stream, dead-letter stream, write keys...   ARGV: group, id, reason, attempts, deadAtMs, writes...
local function ack_dead_letter(keys, argv)
  count_at(argv, 4, 'attempts')
  count_at(argv, 5, 'dead.at')
  local writes = parse_writes(keys, argv, 6, 3)
  local cmd = { 'XADD', keys[2], '*' }
  for _, value in ipairs(entry_fields(keys[1], argv[2])) do cmd[#cmd + 1] = value end
  for _, value in ipairs({ 'source.stream', keys[1], 'source.id', argv[2], 'reason', argv[3],
                           'attempts', argv[4], 'dead.at', argv[5] }) do
    cmd[#cmd + 1] = value
  end
  return acknowledge(keys[1], argv[1], argv[2], function()
    redis.call(unpack(cmd))
    apply_writes(writes)
  end) and 1 or 0
end

-- KEYS: stream, dead-letter stream   ARGV: group, id, reason ('' for none), attempts, deadAtMs
-- The acknowledgement of an entry of a stream several groups read (an events stream: the notifier's, the exporter's
-- and an app's own groups; the janitor trims it below what they all acknowledged), unlike the work streams' above:
-- XACK only, never XDEL, and nothing re-added for a retry. With a reason, the call that acknowledges also copies the
-- entry to the dead-letter stream (its fields, `source.stream`, `source.id`, `reason`, `attempts`, `dead.at`; the
-- newest ~10,000 kept), so a second acknowledgement writes nothing. Returns 1 when this call acknowledged it.
local function ack_shared(keys, argv)
  count_at(argv, 4, 'attempts')
  count_at(argv, 5, 'dead.at')
  if redis.call('XACK', keys[1], argv[1], argv[2]) ~= 1 then return 0 end
  if argv[3] ~= '' then
    local cmd = { 'XADD', keys[2], 'MAXLEN', '~', '10000', '*' }
    for _, value in ipairs(entry_fields(keys[1], argv[2])) do cmd[#cmd + 1] = value end
    for _, value in ipairs({ 'source.stream', keys[1], 'source.id', argv[2], 'reason', argv[3],
                             'attempts', argv[4], 'dead.at', argv[5] }) do
      cmd[#cmd + 1] = value
    end
    redis.call(unpack(cmd))
  end
  return 1
end

-- KEYS: retry zset, stream   ARGV: nowMs, limit
-- Moves members due at or before now back onto the stream (new ids, with pipeline.attempt and
-- pipeline.error) and removes them from the set, atomically. Returns how many moved.
local function promote(keys, argv)
  local now = tonumber(argv[1])
  if now == nil then fail('bad now') end
  local limit = count_at(argv, 2, 'limit')
  local due = redis.call('ZRANGE', keys[1], '-inf', now, 'BYSCORE', 'LIMIT', 0, limit)
  for _, member in ipairs(due) do
    local ok, job = pcall(cmsgpack.unpack, member)
    if ok and type(job) == 'table' and type(job.fields) == 'table' then
      local cmd = { 'XADD', keys[2], '*' }
      for _, value in ipairs(job.fields) do cmd[#cmd + 1] = value end
      cmd[#cmd + 1] = 'pipeline.attempt'
      cmd[#cmd + 1] = tostring(job.attempt)
      cmd[#cmd + 1] = 'pipeline.error'
      cmd[#cmd + 1] = tostring(job.error or '')
      redis.call(unpack(cmd))
    end
    redis.call('ZREM', keys[1], member)
  end
  return #due
end

-- KEYS: stream. ARGV: group, consumer, idle limit (ms). Deletes the consumer when it holds no pending
-- entries and has been idle at least that long, in one step (so it cannot have read anything in between).
-- Returns 1 when deleted, else 0.
local function prune_consumer(keys, argv)
  local limit = count_at(argv, 3, 'idle limit')
  for _, consumer in ipairs(redis.call('XINFO', 'CONSUMERS', keys[1], argv[1])) do
    local info = {}
    for i = 1, #consumer - 1, 2 do info[consumer[i]] = consumer[i + 1] end
    if info['name'] == argv[2] then
      if tonumber(info['pending']) == 0 and tonumber(info['idle']) >= limit then
        redis.call('XGROUP', 'DELCONSUMER', keys[1], argv[1], argv[2])
        return 1
      end
      return 0
    end
  end
  return 0
end

register('ack_write', ack_write)
register('ack_retry', ack_retry)
register('ack_dead_letter', ack_dead_letter)
register('ack_shared', ack_shared)
register('promote', promote)
register('prune_consumer', prune_consumer)
