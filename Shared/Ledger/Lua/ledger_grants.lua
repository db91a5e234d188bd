-- Labelled grants (issue 31, item 5; the last part of the ledger library, LedgerFunctions.swift): entitlements and
-- coins an app's backend gives a user, kept apart from Apple's records. A grant never writes a transaction record,
-- an entitlement hash, an `ent:` field of the account, a binding or an order: entitlements from grants are merged
-- with Apple's when read (EntitlementsView.swift), so a refund's recompute never sees them. A coin grant adds to the
-- balance (`coins`) and to `coins.granted` (granted coins still unspent) of the account hash, and to `grants.coins`
-- of the ledger meta hash (what grants added to the balance, net of revocations: the audit's allowance).
--
-- KEYS of every function here, all in the user's slot (its partition's with several, docs/CLUSTER.md):
--   1 account hash, 2 ledger meta hash, 3 the user's grants hash, 4 the partition's grants due zset,
--   5 the partition's events stream, 6 the user's event log, 7 the user's recently revoked grants (zset: grantId,
--   score = revoked at, ms; kept as long as an idempotency record); `grant` takes the idempotency record as 8 when
--   asked.
-- Every change writes its event (docs/EVENTS.md, "Grants") in the same call, in the user's sequence.

-- The stored value of a grant (the grants hash's field value; Keys+Ledger.swift `grants(user:)`), fixed order.
local function grant_value(g)
  local o = json_object()
  o.add('grantId', g.grantId); o.add('entitlement', g.entitlement); o.add('coins', g.coins)
  o.add('until', g['until']); o.add('reason', g.reason); o.add('by', g.by); o.add('at', g.at)
  return o.text()
end

-- The due zset's member of a grant: JSON [userId, grantId].
local function grant_member(user, grant_id)
  return cjson.encode({ user, grant_id })
end

-- Writes one grant event (`grant.created`, `grant.revoked`, `grant.expired`) to the events stream and the user's
-- log, counted in the user's sequence (`events.seq` of the account hash, as every other user event).
-- `change` may carry delta/balance (coins moved), revokedBy. A project other than the default one (req.project,
-- docs/PROJECTS.md) is named in the event, its entry and its id's scope, as emit_user_event does.
local function grant_event(keys, req, etype, g, change)
  local seq = redis.call('HINCRBY', keys[1], 'events.seq', 1)
  local id = event_id(side_scope(req.user, nil, req.project), seq, etype .. '/' .. g.grantId)
  local o = json_object()
  o.add('id', id); o.add('type', etype); o.add('userId', req.user); o.add('seq', seq)
  o.add('at', iso8601(req.now)); o.add('project', req.project); o.add('source', 'grant'); o.add('grantId', g.grantId)
  o.add('entitlement', g.entitlement); o.add('coins', g.coins)
  o.add('delta', change.delta); o.add('balance', change.balance)
  o.add('until', g['until'] and iso8601(g['until']) or nil)
  o.add('reason', g.reason); o.add('by', g.by); o.add('revokedBy', change.revokedBy)
  local body = o.text()
  local cmd = { 'XADD', keys[5], '*', 'user', req.user, 'kind', 'grant', 'grantId', g.grantId, 'at', n2s(req.now),
                'event.version', '2', 'event.id', id, 'event.type', etype, 'seq', n2s(seq), 'event', body }
  if req.project then cmd[#cmd + 1] = 'project'; cmd[#cmd + 1] = req.project end
  redis.call(unpack(cmd))
  user_log(keys, { ulog = 6, ulogCap = req.ulogCap, ulogTtl = req.ulogTtl }, seq, id, body)
end

local function check_request(argv)
  local ok, req = pcall(cjson.decode, argv[1] or '')
  if not ok or type(req) ~= 'table' or type(req.user) ~= 'string' or type(req.now) ~= 'number'
    or type(req.grantId) ~= 'string' or #req.grantId == 0 then
    fail('bad grant request')
  end
  return req
end

-- Takes back up to `n` granted coins: min(n, coins.granted), never below zero (a spend or refund that took the
-- balance below coins.granted already lowered what is left to take). Returns what was taken and the balance.
local function take_granted(keys, n)
  local granted = math.max(num(redis.call('HGET', keys[1], 'coins.granted'), 0), 0)
  local taken = math.min(n, granted)
  local balance = num(redis.call('HGET', keys[1], 'coins'), 0)
  if taken > 0 then
    balance = redis.call('HINCRBY', keys[1], 'coins', n2s(-taken))
    redis.call('HINCRBY', keys[1], 'coins.granted', n2s(-taken))
    redis.call('HINCRBY', keys[2], 'grants.coins', n2s(-taken))
  end
  return taken, balance
end

-- Whether the stored grant `g` was asked for with the body of `req`: the same entitlement, coins, until and reason,
-- as the client sent them (`until` is the client's own time, never one computed from now, so a retry days later is
-- still the same body). The idempotency record is the grant's stored value, which holds all four, so a record
-- written before this comparison existed compares too.
local function same_body(g, req)
  return g.entitlement == req.entitlement and g.coins == req.coins and g['until'] == req['until']
    and g.reason == req.reason
end

-- The state at `now` of the grant `g` an idempotency record names: `active` while the grants hash holds it and its
-- `until` is ahead; `expired` once its `until` has passed (removed by the sweeper or not yet), unless the user's
-- recently revoked set (KEYS[7]) names it; `revoked` when it left the hash otherwise.
local function grant_state(keys, g, now)
  local ends = tonumber(g['until'])
  if redis.call('HEXISTS', keys[3], g.grantId) == 1 then
    if ends and ends <= now then return 'expired' end
    return 'active'
  end
  if ends and ends <= now and not redis.call('ZSCORE', keys[7], g.grantId) then return 'expired' end
  return 'revoked'
end

-- ARGV[1]: {user, now, grantId, entitlement | coins, until (ms; entitlements only), reason, by, ulogCap, ulogTtl,
-- keyTtl (s, with KEYS[8]), replayOnly?}. Writes the grant, its due entry, the coins, and `grant.created`; with an
-- idempotency key that already names a grant, writes nothing and answers that grant with its state now when the
-- body is the same (`replayed`), or `conflict` when it is not (issue 42, item 9). `replayOnly` (a body whose `until`
-- has passed: only a retry of a grant made earlier) writes nothing in any case and answers `not_found` without one.
-- Returns {"outcome": "granted"|"replayed", "grant": <stored value>, "state": "active"|"revoked"|"expired",
-- "balance": N}, {"outcome": "conflict"} or {"outcome": "not_found"} (nothing written), or {"outcome":
-- "too_many_grants", "held": N} (nothing written) when the user already holds `maxHeld` grants (default 100).
local function grant(keys, argv)
  local req = check_request(argv)
  local coins = req.coins
  if type(req.reason) ~= 'string' or type(req.by) ~= 'string' then fail('bad grant request') end
  if req.entitlement ~= nil then
    if type(req.entitlement) ~= 'string' or coins ~= nil or type(req['until']) ~= 'number' then
      fail('bad grant request')
    end
  elseif type(coins) ~= 'number' or coins < 1 or coins ~= math.floor(coins) then
    fail('bad grant request')
  end
  if keys[8] then
    local prior = redis.call('GET', keys[8])
    if prior then
      local ok, g = pcall(cjson.decode, prior)
      if not ok or type(g) ~= 'table' or not same_body(g, req) then return '{"outcome":"conflict"}' end
      return '{"outcome":"replayed","grant":' .. prior .. ',"state":"' .. grant_state(keys, g, req.now) .. '"}'
    end
  end
  if req.replayOnly then return '{"outcome":"not_found"}' end
  -- A user holds at most `maxHeld` grants (coin grants never end, so a grant key could otherwise grow the hash, and
  -- every customer read of it, without bound).
  local held = redis.call('HLEN', keys[3])
  if held >= (req.maxHeld or 100) then return '{"outcome":"too_many_grants","held":' .. n2s(held) .. '}' end
  if redis.call('HEXISTS', keys[3], req.grantId) == 1 then fail('grant id in use') end
  local g = { grantId = req.grantId, entitlement = req.entitlement, coins = coins, reason = req.reason, by = req.by,
              at = req.now }
  g['until'] = req['until']
  local value = grant_value(g)
  redis.call('HSET', keys[3], g.grantId, value)
  if g['until'] then redis.call('ZADD', keys[4], g['until'], grant_member(req.user, g.grantId)) end
  local change = {}
  if coins then
    change.balance = redis.call('HINCRBY', keys[1], 'coins', n2s(coins))
    change.delta = coins
    redis.call('HINCRBY', keys[1], 'coins.granted', n2s(coins))
    redis.call('HINCRBY', keys[2], 'grants.coins', n2s(coins))
  end
  if keys[8] then redis.call('SET', keys[8], value, 'EX', n2s(req.keyTtl or 604800)) end
  grant_event(keys, req, 'grant.created', g, change)
  local balance = change.balance or num(redis.call('HGET', keys[1], 'coins'), 0)
  return '{"outcome":"granted","grant":' .. value .. ',"state":"active","balance":' .. n2s(balance) .. '}'
end

-- ARGV[1]: {user, now, grantId, by, ulogCap, ulogTtl, keyTtl (s)}. Removes the grant and its due entry; a coin grant
-- takes back min(coins, coins.granted) from the balance and coins.granted (never below zero), then `grant.revoked`.
-- A grant with an `until` is named in the recently revoked set (KEYS[7]) for `keyTtl`, as long as any idempotency
-- record of it can live, so that a replay after its `until` tells revoked from expired (grant_state); entries older
-- than that are dropped here.
-- Returns {"outcome": "revoked", "grant": <stored value>, "taken": N, "balance": N} or {"outcome": "not_found"}.
local function revoke(keys, argv)
  local req = check_request(argv)
  if type(req.by) ~= 'string' then fail('bad revoke request') end
  local value = redis.call('HGET', keys[3], req.grantId)
  if not value then return '{"outcome":"not_found"}' end
  local g = cjson.decode(value)
  redis.call('HDEL', keys[3], req.grantId)
  redis.call('ZREM', keys[4], grant_member(req.user, req.grantId))
  if g['until'] then
    local ttl = req.keyTtl or 604800
    redis.call('ZADD', keys[7], req.now, req.grantId)
    redis.call('ZREMRANGEBYSCORE', keys[7], '-inf', '(' .. n2s(req.now - ttl * 1000))
    redis.call('EXPIRE', keys[7], n2s(ttl))
  end
  local change = { revokedBy = req.by }
  local taken, balance = 0, num(redis.call('HGET', keys[1], 'coins'), 0)
  if g.coins then
    taken, balance = take_granted(keys, g.coins)
    change.delta = -taken; change.balance = balance
  end
  grant_event(keys, req, 'grant.revoked', g, change)
  return '{"outcome":"revoked","grant":' .. value .. ',"taken":' .. n2s(taken) .. ',"balance":' .. n2s(balance) .. '}'
end

-- ARGV[1]: {user, now, grantId, ulogCap, ulogTtl}: the sweeper's call for one due member. Removes the grant when its
-- `until` has passed and writes `grant.expired`; a member whose grant is gone (revoked) is only dropped from the
-- zset, one whose grant has not ended is left. Returns 1 when a grant expired, else 0.
local function expire_grant(keys, argv)
  local req = check_request(argv)
  local member = grant_member(req.user, req.grantId)
  local value = redis.call('HGET', keys[3], req.grantId)
  if not value then
    redis.call('ZREM', keys[4], member)
    return 0
  end
  local g = cjson.decode(value)
  local ends = tonumber(g['until'])
  if not ends or ends > req.now then return 0 end
  redis.call('HDEL', keys[3], req.grantId)
  redis.call('ZREM', keys[4], member)
  grant_event(keys, req, 'grant.expired', g, {})
  return 1
end

register('grant', grant)
register('revoke', revoke)
register('expire_grant', expire_grant)
