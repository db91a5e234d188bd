-- Testers (issue 42; the last part of the ledger library, Testers.swift): the users of a project whose sandbox side
-- counts as production value (docs/ARCHITECTURE.md, invariant 11) — the studio's own testers and the demo account it
-- gives App Review. A mark is the hash `tg:{u:<id>}:tester` in the user's slot (`at`, `by`, `until` ms when it ends,
-- `reason`), read by spends (ledger_spend.lua) in their own call and by ingest's reads; the partition's index
-- `tg:{p0}:testers` (zset: member the user id, score `until` or +inf) lists them. Every change is an event in the
-- user's (primary) sequence, written in the same call: `tester.added` (a new mark, or a new `until`) and
-- `tester.removed`. A mark past its `until` counts for nothing; no event marks that moment (the `tester.added`
-- event named it).
--
-- KEYS of both functions, all in the user's slot: 1 the tester mark, 2 the partition's testers index, 3 the events
-- stream of the user's partition, 4 the user's (primary) account hash, which counts the sequence, 5 the user's event
-- log.
-- ARGV[1]: {user, now, by, until? (ms), reason?, project?, ulogCap, ulogTtl}.

local function tester_request(argv)
  local ok, req = pcall(cjson.decode, argv[1] or '')
  if not ok or type(req) ~= 'table' or type(req.user) ~= 'string' or #req.user == 0 or #req.user > 128
    or type(req.now) ~= 'number' or type(req.by) ~= 'string' or #req.by == 0 or #req.by > 128 then
    fail('bad tester request')
  end
  if req['until'] ~= nil and (type(req['until']) ~= 'number' or req['until'] <= req.now) then
    fail('bad tester until')
  end
  if req.reason ~= nil and (type(req.reason) ~= 'string' or #req.reason == 0 or #req.reason > 200) then
    fail('bad tester reason')
  end
  if req.project == '' then req.project = nil end
  return req
end

-- Writes one tester event (`tester.added`, `tester.removed`) to the events stream and the user's log, counted in the
-- user's sequence (`events.seq` of the account hash, as every other user event).
local function tester_event(keys, req, etype, mark)
  local seq = redis.call('HINCRBY', keys[4], 'events.seq', 1)
  local id = event_id(side_scope(req.user, nil, req.project), seq, etype)
  local o = json_object()
  o.add('id', id); o.add('type', etype); o.add('userId', req.user); o.add('seq', seq)
  o.add('at', iso8601(req.now)); o.add('project', req.project); o.add('source', 'tester')
  o.add('until', mark['until'] and iso8601(mark['until']) or nil)
  o.add('reason', mark.reason); o.add('by', req.by)
  local body = o.text()
  local cmd = { 'XADD', keys[3], '*', 'user', req.user, 'kind', 'tester', 'at', n2s(req.now), 'event.version', '2',
                'event.id', id, 'event.type', etype, 'seq', n2s(seq), 'event', body }
  if req.project then cmd[#cmd + 1] = 'project'; cmd[#cmd + 1] = req.project end
  redis.call(unpack(cmd))
  user_log({ keys[1], keys[5] }, { ulog = 2, ulogCap = req.ulogCap, ulogTtl = req.ulogTtl }, seq, id, body)
  return seq, id
end

-- Marks the user a tester (until `until`, or with no end) and writes `tester.added`. The same mark again (same `until`,
-- still in force) writes nothing: {outcome: unchanged}. Returns {outcome: added, seq, id} otherwise.
local function tester_add(keys, argv)
  local req = tester_request(argv)
  if #keys ~= 5 then fail('bad keys') end
  local kept = redis.call('HMGET', keys[1], 'at', 'until', 'reason')
  local ends = tonumber(kept[2])
  if kept[1] and ends == req['until'] and kept[3] == (req.reason or false) and (ends == nil or ends > req.now) then
    return cjson.encode({ outcome = 'unchanged' })
  end
  redis.call('DEL', keys[1])
  redis.call('HSET', keys[1], 'at', n2s(req.now), 'by', req.by)
  if req['until'] then redis.call('HSET', keys[1], 'until', n2s(req['until'])) end
  if req.reason then redis.call('HSET', keys[1], 'reason', req.reason) end
  redis.call('ZADD', keys[2], req['until'] and n2s(req['until']) or '+inf', req.user)
  local seq, id = tester_event(keys, req, 'tester.added', { ['until'] = req['until'], reason = req.reason })
  return cjson.encode({ outcome = 'added', seq = n2s(seq), id = id })
end

-- Removes the user's mark (in force or past its `until`) and writes `tester.removed`. Returns {outcome: removed, seq,
-- id}, or {outcome: not_found} when the user has no mark (nothing written).
local function tester_remove(keys, argv)
  local req = tester_request(argv)
  if #keys ~= 5 then fail('bad keys') end
  redis.call('ZREM', keys[2], req.user)
  if redis.call('EXISTS', keys[1]) == 0 then return cjson.encode({ outcome = 'not_found' }) end
  redis.call('DEL', keys[1])
  local seq, id = tester_event(keys, req, 'tester.removed', {})
  return cjson.encode({ outcome = 'removed', seq = n2s(seq), id = id })
end

register('tester_add', tester_add)
register('tester_remove', tester_remove)
