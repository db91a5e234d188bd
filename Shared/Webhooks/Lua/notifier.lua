-- The notifier's steps (NotifierFunctions.swift; Services/Notifier/README.md describes the design). Every call's
-- keys are one endpoint's keys in one partition plus that partition's events stream, all tagged `{pN}`:
--   stream    tg:{pN}:events                       (consumer group `webhook:<endpoint>`)
--   due       tg:{pN}:webhook:<endpoint>:due       zset: entry id scored by when to look at it next (ms)
--   attempts  tg:{pN}:webhook:<endpoint>:attempts  hash: entry id -> failed attempts so far
--   cursor    tg:{pN}:webhook:<endpoint>:cursor    hash: subject (user, or `~app`) -> last seq delivered or dead
--   waiting   tg:{pN}:webhook:<endpoint>:waiting   hash: `<subject>\n<seq>` -> entry id blocked on seq-1
--   lease     tg:{pN}:webhook:<endpoint>:lease:<subject>  string: the token of the one delivery in flight
--   dead      tg:{pN}:webhook:<endpoint>:dead      stream: dead letters (the entry's fields and why)

-- KEYS: stream, due, cursor   ARGV: group, consumer, count, nowMs, project (the endpoint's; absent or empty: default)
-- Reads up to `count` new entries for the group; a schema-2 entry of the endpoint's project becomes due now, any other
-- is acknowledged (old format: not this service's; another project's: another endpoint's, docs/PROJECTS.md) without
-- touching a cursor, so the endpoint's cursors hold one project's subjects only. The first entry of a subject the
-- endpoint has no cursor for starts its cursor just below its seq: the group reads in stream order, which is each
-- subject's seq order, so that entry is the subject's earliest this endpoint will see (a new endpoint, or history
-- trimmed away). Returns {read, admitted}.
local function admit(keys, argv)
  local count = count_at(argv, 3, 'count')
  local now = count_at(argv, 4, 'now')
  local project = argv[5]
  if project == '' then project = nil end
  local reply = redis.call('XREADGROUP', 'GROUP', argv[1], argv[2], 'COUNT', count, 'STREAMS', keys[1], '>')
  if not reply then return { 0, 0 } end
  local entries = reply[1][2]
  local admitted = 0
  for _, entry in ipairs(entries) do
    local fields = hash_table(entry[2] or {})
    local seq = tonumber(fields['seq'] or '')
    if fields['event.version'] == '2' and fields['project'] == project then
      if seq ~= nil and seq >= 1 then
        -- The subject whose sequence the entry counts in (WebhookEvent.subject): the user, the user's sandbox side
        -- (`<user>~sandbox`, its own seq), or the app.
        local subject = fields['user']
        if subject == nil or subject == '' then subject = '~app'
        elseif fields['side'] == 'sandbox' then subject = subject .. '~sandbox' end
        redis.call('HSETNX', keys[3], subject, n2s(seq - 1))
      end
      redis.call('ZADD', keys[2], 'NX', n2s(now), entry[1])
      admitted = admitted + 1
    else
      redis.call('XACK', keys[1], argv[1], entry[1])
    end
  end
  return { #entries, admitted }
end

-- KEYS: due, stream, attempts   ARGV: group, nowMs, count, reserveMs
-- Takes up to `count` entries due now, reserving each for `reserveMs` (another replica does not take it meanwhile).
-- Returns {{id, fields, attempts}, …}; an entry no longer in the stream (trimmed) is dropped and acknowledged.
local function take(keys, argv)
  local now = count_at(argv, 2, 'now')
  local count = count_at(argv, 3, 'count')
  local reserve = count_at(argv, 4, 'reserve')
  local ids = redis.call('ZRANGE', keys[1], '-inf', n2s(now), 'BYSCORE', 'LIMIT', 0, count)
  local out = {}
  for _, id in ipairs(ids) do
    local found = redis.call('XRANGE', keys[2], id, id)
    if #found == 0 then
      redis.call('ZREM', keys[1], id)
      redis.call('HDEL', keys[3], id)
      redis.call('XACK', keys[2], argv[1], id)
    else
      redis.call('ZADD', keys[1], 'XX', n2s(now + reserve), id)
      out[#out + 1] = { id, found[1][2], tonumber(redis.call('HGET', keys[3], id) or '0') }
    end
  end
  return out
end

-- KEYS: cursor, lease, due, waiting   ARGV: subject, seq, token, leaseMs, nowMs, id, recheckMs
-- Whether the entry (seq `seq` of `subject`) may be delivered now:
--   {'go', cursor}      cursor = seq-1 and the lease is now ours (for leaseMs; the entry due again when it ends)
--   {'done', cursor}    seq is at or below the cursor: delivered or dead already
--   {'blocked', cursor} an earlier seq is not finished: remembered in `waiting`, looked at again after recheckMs
--                       or as soon as seq-1 finishes
--   {'busy', cursor}    another delivery of this subject holds the lease: due again when the lease ends
local function begin(keys, argv)
  local seq = count_at(argv, 2, 'seq')
  local lease = count_at(argv, 4, 'lease')
  local now = count_at(argv, 5, 'now')
  local recheck = count_at(argv, 7, 'recheck')
  local cursor = tonumber(redis.call('HGET', keys[1], argv[1]) or '0')
  if seq <= cursor then return { 'done', cursor } end
  if seq > cursor + 1 then
    redis.call('HSET', keys[4], argv[1] .. '\n' .. n2s(seq), argv[6])
    redis.call('ZADD', keys[3], 'XX', n2s(now + recheck), argv[6])
    return { 'blocked', cursor }
  end
  local holder = redis.call('GET', keys[2])
  if holder and holder ~= argv[3] then
    local left = redis.call('PTTL', keys[2])
    if left < 10 then left = 10 end
    redis.call('ZADD', keys[3], 'XX', n2s(now + left), argv[6])
    return { 'busy', cursor }
  end
  redis.call('SET', keys[2], argv[3], 'PX', lease)
  redis.call('ZADD', keys[3], 'XX', n2s(now + lease), argv[6])
  return { 'go', cursor }
end

-- KEYS: cursor, lease, due, attempts, waiting, stream, dead
-- ARGV: group, id, subject, seq, token, outcome (delivered | skipped | dead | done), nowMs, reason
-- Finishes the entry: the cursor moves up to seq (never down), the lease is let go when it is still ours, the entry
-- leaves `due`/`attempts` and is acknowledged, a `dead` one is copied to the dead letters first, and the subject's
-- next seq, when it waits, is due now. Returns {1 when this call acknowledged the entry (0: it was already), the
-- id of the next seq it made due, or false}: the caller may go on with that one at once (`take_one`).
local function finish(keys, argv)
  local seq = count_at(argv, 4, 'seq')
  local now = count_at(argv, 7, 'now')
  local outcome = argv[6]
  if outcome ~= 'delivered' and outcome ~= 'skipped' and outcome ~= 'dead' and outcome ~= 'done' then
    fail('bad outcome ' .. tostring(outcome))
  end
  local cursor = tonumber(redis.call('HGET', keys[1], argv[3]) or '0')
  if outcome ~= 'done' and seq > cursor then redis.call('HSET', keys[1], argv[3], n2s(seq)) end
  if redis.call('GET', keys[2]) == argv[5] then redis.call('DEL', keys[2]) end
  local attempts = redis.call('HGET', keys[4], argv[2]) or '0'
  redis.call('ZREM', keys[3], argv[2])
  redis.call('HDEL', keys[4], argv[2])
  redis.call('HDEL', keys[5], argv[3] .. '\n' .. n2s(seq))
  if outcome == 'dead' then
    local found = redis.call('XRANGE', keys[6], argv[2], argv[2])
    if #found == 1 and redis.call('XPENDING', keys[6], argv[1], argv[2], argv[2], 1)[1] then
      local cmd = { 'XADD', keys[7], '*' }
      for _, value in ipairs(found[1][2]) do cmd[#cmd + 1] = value end
      for _, value in ipairs({ 'source.id', argv[2], 'reason', argv[8], 'attempts', attempts, 'dead.at', n2s(now) }) do
        cmd[#cmd + 1] = value
      end
      redis.call(unpack(cmd))
    end
  end
  local acked = redis.call('XACK', keys[6], argv[1], argv[2])
  local next_key = argv[3] .. '\n' .. n2s(seq + 1)
  local next_id = redis.call('HGET', keys[5], next_key)
  if next_id then
    redis.call('HDEL', keys[5], next_key)
    if not redis.call('ZSCORE', keys[3], next_id) then
      next_id = false
    else
      redis.call('ZADD', keys[3], 'XX', n2s(now), next_id)
    end
  end
  return { acked, next_id or false }
end

-- KEYS: due, stream, attempts   ARGV: group, nowMs, id, reserveMs
-- `take` of one entry by id: when it is due now, reserves it and returns {id, fields, attempts}; otherwise (another
-- replica or the loop took it meanwhile, or it is finished) returns false.
local function take_one(keys, argv)
  local now = count_at(argv, 2, 'now')
  local reserve = count_at(argv, 4, 'reserve')
  local score = redis.call('ZSCORE', keys[1], argv[3])
  if not score or tonumber(score) > now then return false end
  local found = redis.call('XRANGE', keys[2], argv[3], argv[3])
  if #found == 0 then return false end
  redis.call('ZADD', keys[1], 'XX', n2s(now + reserve), argv[3])
  return { argv[3], found[1][2], tonumber(redis.call('HGET', keys[3], argv[3]) or '0') }
end

-- KEYS: lease, due, attempts   ARGV: id, token, dueMs
-- A failed attempt: unless another delivery holds the lease now, counts the attempt, makes the entry due at dueMs
-- and lets the lease go. Returns 1, or 0 when the lease is another's (that delivery decides).
local function retry(keys, argv)
  local due = count_at(argv, 3, 'due')
  local holder = redis.call('GET', keys[1])
  if holder and holder ~= argv[2] then return 0 end
  if holder then redis.call('DEL', keys[1]) end
  redis.call('HINCRBY', keys[3], argv[1], 1)
  redis.call('ZADD', keys[2], 'XX', n2s(due), argv[1])
  return 1
end

register('admit', admit)
register('take', take)
register('begin', begin)
register('finish', finish)
register('retry', retry)
register('take_one', take_one)
