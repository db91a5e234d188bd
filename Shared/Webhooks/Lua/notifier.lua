-- The notifier's steps (NotifierFunctions.swift; Services/Notifier/README.md describes the design). Every call's
-- keys are one endpoint's keys in one partition plus that partition's events stream, all tagged `{pN}`:
--   stream    tg:{pN}:events                       (consumer group `webhook:<endpoint>`)
--   due       tg:{pN}:webhook:<endpoint>:due       zset: entry id scored by when to look at it next (ms)
--   attempts  tg:{pN}:webhook:<endpoint>:attempts  hash: entry id -> failed attempts so far
--   cursor    tg:{pN}:webhook:<endpoint>:cursor    hash: subject (user, or `~app`) -> last seq delivered or dead
--   waiting   tg:{pN}:webhook:<endpoint>:waiting   hash: `<subject>\n<seq>` -> entry id blocked on seq-1
--   lease     tg:{pN}:webhook:<endpoint>:lease:<subject>  string: the token of the one delivery in flight
--   dead      tg:{pN}:webhook:<endpoint>:dead      stream: dead letters (the entry's fields and why), capped
--                                                  (`MAXLEN ~ deadMax`; what the cap drops is counted)
--   seen      tg:{pN}:webhook:<endpoint>:seen      zset: subject -> ms of its newest entry admitted (v4): what
--                                                  lets `pull` forget the cursors of subjects with nothing pending
-- and, in the first partition only, what the endpoint's replicas share (`fleet`):
--   replicas  tg:{p0}:webhook:<endpoint>:replicas  zset: replica (consumer name) -> when last seen (ms)
--   breaker   tg:{p0}:webhook:<endpoint>:breaker   string: until when (ms) a replica's breaker is open

-- The subject whose sequence an entry's `seq` counts in (WebhookEvent.subject): the user, the user's sandbox side
-- (`<user>~sandbox`, its own seq), or the app.
local function subject_of(fields)
  local user = fields['user']
  if user == nil or user == '' then return '~app' end
  if fields['side'] == 'sandbox' then return user .. '~sandbox' end
  return user
end

-- The milliseconds of a stream entry id (when the ledger wrote it).
local function written_at(id)
  return tonumber(string.match(id, '^(%d+)')) or 0
end

-- Copies entry `id` (its fields `flat`) to the dead letters `dead` with `source.id`, `reason`, `attempts` and
-- `dead.at`, keeping about the newest `dead_max` (`MAXLEN ~`: whole stream nodes go). Returns how many older dead
-- letters the cap dropped (the caller counts them: `tollgate_webhook_dead_dropped_total`).
local function dead_letter(dead, id, flat, reason, attempts, now, dead_max)
  local before = redis.call('XLEN', dead)
  local cmd = { 'XADD', dead, 'MAXLEN', '~', n2s(dead_max), '*' }
  for _, value in ipairs(flat) do cmd[#cmd + 1] = value end
  for _, value in ipairs({ 'source.id', id, 'reason', reason, 'attempts', attempts, 'dead.at', n2s(now) }) do
    cmd[#cmd + 1] = value
  end
  redis.call(unpack(cmd))
  local dropped = before + 1 - redis.call('XLEN', dead)
  if dropped < 0 then dropped = 0 end
  return dropped
end

-- `pull`'s first step. KEYS: stream, due, cursor, seen   ARGV: group, consumer, count, nowMs, project (the
-- endpoint's; absent or empty: default)
-- Reads up to `count` new entries for the group; a schema-2 entry of the endpoint's project becomes due now, any other
-- is acknowledged (old format: not this service's; another project's: another endpoint's, docs/PROJECTS.md) without
-- touching a cursor, so the endpoint's cursors hold one project's subjects only. The first entry of a subject the
-- endpoint has no cursor for starts its cursor just below its seq: the group reads in stream order, which is each
-- subject's seq order, so that entry is the subject's earliest this endpoint will see (a new endpoint, or history
-- trimmed away). Each admitted subject's `seen` score becomes its newest entry's write time (ms of the entry id).
-- Returns {read, admitted}.
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
        local subject = subject_of(fields)
        redis.call('HSETNX', keys[3], subject, n2s(seq - 1))
        redis.call('ZADD', keys[4], 'GT', n2s(written_at(entry[1])), subject)
      end
      redis.call('ZADD', keys[2], 'NX', n2s(now), entry[1])
      admitted = admitted + 1
    else
      redis.call('XACK', keys[1], argv[1], entry[1])
    end
  end
  return { #entries, admitted }
end

-- Whether entry `id` (seq `seq` of `subject`) may be delivered now, for `token`:
--   'go'      cursor = seq-1 and the subject's lease is now `token`'s (for leaseMs; the entry due again when it ends)
--   'done'    seq is at or below the cursor: delivered or dead already
--   'blocked' an earlier seq is not finished: remembered in `waiting`, looked at again after recheckMs or as soon as
--             seq-1 finishes
--   'busy'    another delivery of this subject holds the lease: due again when the lease ends
-- `k` holds the keys: cursor, due, waiting, and lease (the subject's: `<base>:lease:<subject>`). The lease key is the
-- one key a function here builds instead of receiving in KEYS: it is named by the entry the function reads, and it
-- shares the partition's hash tag with every declared key, so it is in the same slot (Redis refuses only keys of
-- another slot, docs/CLUSTER.md). Its layout is the one v1 used, so v1 and v2 replicas exclude each other in a rollout.
local function gate(k, subject, seq, id, token, lease, now, recheck)
  local stored = redis.call('HGET', k.cursor, subject)
  if not stored then
    -- Forgotten (`forget`) while an entry of an older replica's admitting was pending: it starts here, as admit would.
    stored = n2s(seq - 1)
    redis.call('HSET', k.cursor, subject, stored)
    redis.call('ZADD', k.seen, 'GT', n2s(written_at(id)), subject)
  end
  local cursor = tonumber(stored)
  if seq <= cursor then return 'done' end
  if seq > cursor + 1 then
    redis.call('HSET', k.waiting, subject .. '\n' .. n2s(seq), id)
    redis.call('ZADD', k.due, 'XX', n2s(now + recheck), id)
    return 'blocked'
  end
  local holder = redis.call('GET', k.lease)
  if holder and holder ~= token then
    local left = redis.call('PTTL', k.lease)
    if left < 10 then left = 10 end
    redis.call('ZADD', k.due, 'XX', n2s(now + left), id)
    return 'busy'
  end
  redis.call('SET', k.lease, token, 'PX', lease)
  redis.call('ZADD', k.due, 'XX', n2s(now + lease), id)
  return 'go'
end

-- Seq `seq` of `subject` no longer waits, and the subject's next seq, when it waits on it, is due now.
local function wake_next(k, subject, seq, now)
  redis.call('HDEL', k.waiting, subject .. '\n' .. n2s(seq))
  local next_key = subject .. '\n' .. n2s(seq + 1)
  local next_id = redis.call('HGET', k.waiting, next_key)
  if next_id then
    redis.call('HDEL', k.waiting, next_key)
    redis.call('ZADD', k.due, 'XX', n2s(now), next_id)
  end
end

-- Ends entry `id` without a request when it was finished already ('done' from `gate`): out of the schedule and
-- acknowledged; the subject's next seq, when it waits, due now.
local function drop_done(k, group, id, subject, seq, now)
  redis.call('ZREM', k.due, id)
  redis.call('HDEL', k.attempts, id)
  redis.call('XACK', k.stream, group, id)
  wake_next(k, subject, seq, now)
end

-- Dead-letters, oldest first, up to `limit` entries pending in the group that were written more than horizonMs
-- before now, whatever the endpoint's breaker says (`pull` runs while it is open, taking nothing): an endpoint down
-- for longer than the horizon does not keep events pending, holding the stream against its trim. An entry whose
-- subject's lease is held is in flight (that delivery finishes it), and so are its subject's later ones this call;
-- one no longer in the stream is dropped. Each is finished as `finish` would with `dead`: the cursor moves up to its
-- seq, its subject's next seq (waiting) is due now. Returns {dead-lettered, dropped by the dead letters' cap}.
local function expire(k, group, now, horizon, limit, prefix, dead_max)
  local cutoff = now - horizon
  if cutoff <= 0 or limit <= 0 then return 0, 0 end
  local pending = redis.call('XPENDING', k.stream, group, '-', n2s(cutoff - 1), limit)
  local expired, dropped, held = 0, 0, {}
  for _, item in ipairs(pending) do
    local id = item[1]
    local found = redis.call('XRANGE', k.stream, id, id)
    if #found == 0 then
      redis.call('ZREM', k.due, id)
      redis.call('HDEL', k.attempts, id)
      redis.call('XACK', k.stream, group, id)
    else
      local flat = found[1][2]
      local fields = hash_table(flat)
      local subject = subject_of(fields)
      if not held[subject] and redis.call('EXISTS', prefix .. subject) == 1 then held[subject] = true end
      if not held[subject] then
        local seq = tonumber(fields['seq'] or '')
        local attempts = redis.call('HGET', k.attempts, id) or '0'
        dropped = dropped + dead_letter(k.dead, id, flat, 'horizon: expired', attempts, now, dead_max)
        redis.call('ZREM', k.due, id)
        redis.call('HDEL', k.attempts, id)
        redis.call('XACK', k.stream, group, id)
        expired = expired + 1
        if seq ~= nil and seq >= 1 and seq == math.floor(seq) then
          local cursor = tonumber(redis.call('HGET', k.cursor, subject) or '0')
          if seq > cursor then redis.call('HSET', k.cursor, subject, n2s(seq)) end
          wake_next(k, subject, seq, now)
        end
      end
    end
  end
  return expired, dropped
end

-- Forgets, up to `limit` at a time, the cursors of subjects with nothing pending in the group: those whose newest
-- admitted entry (`seen`) was written more than `quiet` ms before now (the horizon and a lease: every entry of theirs
-- is delivered or dead by then) and before every entry pending (XPENDING's smallest id), so that no entry of theirs
-- can be pending. A forgotten subject's next entry starts its cursor again when admitted (`admit`): the group reads in
-- stream order, so nothing of it is left before that one. Returns how many were forgotten.
local function forget(k, group, now, quiet, limit)
  local below = now - quiet
  if below <= 0 or limit <= 0 then return 0 end
  local summary = redis.call('XPENDING', k.stream, group)
  if summary[1] > 0 and summary[2] then below = math.min(below, written_at(summary[2])) end
  local subjects = redis.call('ZRANGE', k.seen, '-inf', '(' .. n2s(below), 'BYSCORE', 'LIMIT', 0, limit)
  for _, subject in ipairs(subjects) do
    redis.call('HDEL', k.cursor, subject)
    redis.call('ZREM', k.seen, subject)
  end
  return #subjects
end

-- KEYS: stream, due, cursor, attempts, waiting, dead, seen
-- ARGV: group, consumer, readCount, nowMs, project, takeCount, tokenBase, leaseMs, recheckMs, horizonMs, leasePrefix,
--       deadMax
-- One step of the loop for one partition: `admit` (readCount new entries), `expire` (up to readCount entries past
-- the horizon to the dead letters, even while nothing is taken), `forget` (up to readCount cursors of subjects with
-- nothing pending, quiet for horizonMs plus leaseMs), then takes up to `takeCount` entries due now and puts each
-- through `gate` with the token `<tokenBase>/<id>`. An entry no longer in the stream (trimmed) is dropped and
-- acknowledged; a 'done' one is acknowledged (`drop_done`); a 'busy' or 'blocked' one stays scheduled.
-- Returns {read, admitted, {{id, fields, attempts, token, state}, …}, expired, dropped, forgotten} with state 'go'
-- (the lease is the token's: deliver), 'unreadable' (no seq: the caller dead-letters it) or 'expired' (blocked, and
-- past horizonMs plus a lease since it was written: its predecessor is gone, the caller dead-letters it so the
-- subject's later events go on); expired, dropped: what `expire` dead-lettered and what the dead letters' cap dropped
-- for it; forgotten: the cursors `forget` dropped.
local function pull(keys, argv)
  local read_count = count_at(argv, 3, 'count')
  local now = count_at(argv, 4, 'now')
  local take_count = count_at(argv, 6, 'takeCount')
  local lease = count_at(argv, 8, 'lease')
  local recheck = count_at(argv, 9, 'recheck')
  local horizon = count_at(argv, 10, 'horizon')
  local prefix = argv[11] or ''
  if prefix == '' then fail('bad lease prefix') end
  local dead_max = count_at(argv, 12, 'deadMax')
  if dead_max < 1 then fail('bad deadMax') end
  local k = {
    stream = keys[1], due = keys[2], cursor = keys[3], attempts = keys[4], waiting = keys[5], dead = keys[6],
    seen = keys[7],
  }
  local admitted = admit({ keys[1], keys[2], keys[3], keys[7] }, argv)
  local expired, dropped = expire(k, argv[1], now, horizon, read_count, prefix, dead_max)
  local forgotten = forget(k, argv[1], now, horizon + lease, read_count)
  local out = {}
  if take_count == 0 then return { admitted[1], admitted[2], out, expired, dropped, forgotten } end
  local ids = redis.call('ZRANGE', k.due, '-inf', n2s(now), 'BYSCORE', 'LIMIT', 0, take_count)
  for _, id in ipairs(ids) do
    local found = redis.call('XRANGE', k.stream, id, id)
    if #found == 0 then
      redis.call('ZREM', k.due, id)
      redis.call('HDEL', k.attempts, id)
      redis.call('XACK', k.stream, argv[1], id)
    else
      local flat = found[1][2]
      local fields = hash_table(flat)
      local seq = tonumber(fields['seq'] or '')
      local attempts = tonumber(redis.call('HGET', k.attempts, id) or '0')
      local token = argv[7] .. '/' .. id
      if seq == nil or seq < 1 or seq ~= math.floor(seq) then
        redis.call('ZADD', k.due, 'XX', n2s(now + lease), id)
        out[#out + 1] = { id, flat, attempts, token, 'unreadable' }
      else
        local subject = subject_of(fields)
        k.lease = prefix .. subject
        local state = gate(k, subject, seq, id, token, lease, now, recheck)
        if state == 'go' then
          out[#out + 1] = { id, flat, attempts, token, 'go' }
        elseif state == 'done' then
          drop_done(k, argv[1], id, subject, seq, now)
        elseif state == 'blocked' and now - written_at(id) > horizon + lease then
          out[#out + 1] = { id, flat, attempts, token, 'expired' }
        end
      end
    end
  end
  return { admitted[1], admitted[2], out, expired, dropped, forgotten }
end

-- KEYS: cursor, lease, due, attempts, waiting, stream, dead, seen
-- ARGV: group, id, subject, seq, token, outcome (delivered | skipped | dead | done), nowMs, reason, nextToken, leaseMs,
--       deadMax
-- Finishes the entry: the cursor moves up to seq (never down), the lease is let go when it is still ours, the entry
-- leaves `due`/`attempts`/`waiting` and is acknowledged, a `dead` one is copied to the dead letters first. When the
-- subject's next seq waits, it is due now, and with a nextToken it is taken at once: through `gate` with that token,
-- so the caller goes on with it in the same slot without another call.
-- Returns {acked (1 when this call acknowledged the entry, 0: it was already), next, dropped} where next is false,
-- the next seq's id (made due, not taken: no nextToken), or {id, fields, attempts, token} (taken: its lease is
-- nextToken's), and dropped how many old dead letters the cap (`dead_letter`, deadMax) dropped for this one.
local function finish(keys, argv)
  local seq = count_at(argv, 4, 'seq')
  local now = count_at(argv, 7, 'now')
  local outcome = argv[6]
  if outcome ~= 'delivered' and outcome ~= 'skipped' and outcome ~= 'dead' and outcome ~= 'done' then
    fail('bad outcome ' .. tostring(outcome))
  end
  local next_token = argv[9] or ''
  local lease = 0
  if next_token ~= '' then lease = count_at(argv, 10, 'lease') end
  local dead_max = count_at(argv, 11, 'deadMax')
  if dead_max < 1 then fail('bad deadMax') end
  local subject = argv[3]
  local cursor = tonumber(redis.call('HGET', keys[1], subject) or '0')
  if outcome ~= 'done' and seq > cursor then
    redis.call('HSET', keys[1], subject, n2s(seq))
    -- A cursor set here is one `forget` can drop too (it was forgotten while this entry was in flight).
    redis.call('ZADD', keys[8], 'GT', n2s(written_at(argv[2])), subject)
  end
  if redis.call('GET', keys[2]) == argv[5] then redis.call('DEL', keys[2]) end
  local attempts = redis.call('HGET', keys[4], argv[2]) or '0'
  redis.call('ZREM', keys[3], argv[2])
  redis.call('HDEL', keys[4], argv[2])
  redis.call('HDEL', keys[5], subject .. '\n' .. n2s(seq))
  local dropped = 0
  if outcome == 'dead' then
    local found = redis.call('XRANGE', keys[6], argv[2], argv[2])
    if #found == 1 and redis.call('XPENDING', keys[6], argv[1], argv[2], argv[2], 1)[1] then
      dropped = dead_letter(keys[7], argv[2], found[1][2], argv[8], attempts, now, dead_max)
    end
  end
  local acked = redis.call('XACK', keys[6], argv[1], argv[2])
  local next_key = subject .. '\n' .. n2s(seq + 1)
  local next_id = redis.call('HGET', keys[5], next_key)
  if not next_id then return { acked, false, dropped } end
  redis.call('HDEL', keys[5], next_key)
  if not redis.call('ZSCORE', keys[3], next_id) then return { acked, false, dropped } end
  redis.call('ZADD', keys[3], 'XX', n2s(now), next_id)
  if next_token == '' then return { acked, next_id, dropped } end
  local found = redis.call('XRANGE', keys[6], next_id, next_id)
  if #found == 0 then
    redis.call('ZREM', keys[3], next_id)
    redis.call('HDEL', keys[4], next_id)
    redis.call('XACK', keys[6], argv[1], next_id)
    return { acked, false, dropped }
  end
  local k = {
    cursor = keys[1], lease = keys[2], due = keys[3], attempts = keys[4], waiting = keys[5], stream = keys[6],
    seen = keys[8],
  }
  local state = gate(k, subject, seq + 1, next_id, next_token, lease, now, lease)
  if state == 'done' then drop_done(k, argv[1], next_id, subject, seq + 1, now) end
  if state ~= 'go' then return { acked, false, dropped } end
  return { acked, { next_id, found[1][2], tonumber(redis.call('HGET', keys[4], next_id) or '0'), next_token }, dropped }
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

-- KEYS: replicas, breaker   (the endpoint's fleet keys: `tg:{p0}:webhook:<endpoint>:replicas` and `:breaker`, in the
--                           first partition's slot; WebhookKeys.swift)
-- ARGV: consumer, nowMs, ttlMs, openUntilMs (0: nothing to publish)
-- What the endpoint's replicas share: marks `consumer` alive at nowMs and forgets replicas not seen for ttlMs (a zset
-- scored by when each was last seen), and publishes this replica's open breaker when it is open longer than the one
-- published (a string holding open-until ms, which lives until then). Returns {live replicas, the published
-- breaker's open-until ms, 0 when none is open}: each replica takes its share of the endpoint's concurrency and
-- opens its breaker until a published time, so a down endpoint costs the fleet what it would cost one replica.
local function fleet(keys, argv)
  local now = count_at(argv, 2, 'now')
  local ttl = count_at(argv, 3, 'ttl')
  local open_until = count_at(argv, 4, 'openUntil')
  if argv[1] == nil or argv[1] == '' or ttl < 1 then fail('bad consumer or ttl') end
  redis.call('ZADD', keys[1], n2s(now), argv[1])
  redis.call('ZREMRANGEBYSCORE', keys[1], '-inf', '(' .. n2s(now - ttl))
  redis.call('PEXPIRE', keys[1], ttl)
  local published = tonumber(redis.call('GET', keys[2]) or '0') or 0
  if open_until > now and open_until > published then
    redis.call('SET', keys[2], n2s(open_until), 'PX', open_until - now)
    published = open_until
  end
  if published <= now then published = 0 end
  return { redis.call('ZCARD', keys[1]), published }
end

register('pull', pull)
register('finish', finish)
register('retry', retry)
register('fleet', fleet)
