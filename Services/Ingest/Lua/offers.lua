-- Ingest's record of the promotional offer signatures it hands out (OfferFunctions.swift): the per-user limit and
-- the record, in one step.

-- KEYS: the user's signatures of one offer (zset: member `<orderNo>/<nonce>`, score = signed at, ms)[, the order
-- hash whose appAccountToken the signature carries].
-- ARGV: now (ms), window (ms), limit (0: none), cap, member, offer id.
-- Signatures older than the window no longer count and are dropped. With `limit` of them left inside it the answer
-- is `{0, ms until the oldest of them leaves the window}` and nothing is recorded. Without the order key that is all
-- (a check before an order is made): `{1}`. Otherwise, when the order still exists, the signature is recorded: added
-- to the zset, which keeps its newest `cap` members and expires a window after the last signature, and
-- `offer:<offer id>` = now on the order, which the ledger reads when Apple reports the redemption; `{1}`. A vanished
-- order (expired meanwhile) records nothing: `{-1}`.
local function sign(keys, argv)
  local now, window, limit, cap = count_at(argv, 1), count_at(argv, 2), count_at(argv, 3), count_at(argv, 4)
  local member, offer = argv[5], argv[6]
  if window == 0 or cap == 0 or limit > cap then fail('bad offer limits') end
  if type(member) ~= 'string' or #member == 0 or #member > 128 then fail('bad signature member') end
  if type(offer) ~= 'string' or #offer == 0 or #offer > 64 then fail('bad offer id') end
  redis.call('ZREMRANGEBYSCORE', keys[1], '-inf', now - window)
  if limit > 0 then
    local held = redis.call('ZCARD', keys[1])
    if held >= limit then
      local oldest = redis.call('ZRANGE', keys[1], held - limit, held - limit, 'WITHSCORES')
      return { 0, math.max(tonumber(oldest[2]) + window - now, 1) }
    end
  end
  if not keys[2] then return { 1 } end
  if redis.call('EXISTS', keys[2]) == 0 then return { -1 } end
  redis.call('ZADD', keys[1], now, member)
  redis.call('ZREMRANGEBYRANK', keys[1], 0, -(cap + 1))
  redis.call('PEXPIRE', keys[1], window)
  redis.call('HSET', keys[2], 'offer:' .. offer, n2s(now))
  return { 1 }
end

register('sign', sign)
