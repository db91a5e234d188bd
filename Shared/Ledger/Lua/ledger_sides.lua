-- The user's sandbox side (the last part of the ledger library, LedgerSide.swift, SandboxSide.swift): a production
-- deployment's App Review and TestFlight purchases, kept on a ledger of their own per user. An operator clears it.

-- KEYS: 1 the sandbox account, 2 its ledger meta, 3 its transactions zset, 4 its notifications set, 5 the events
-- stream of the user's partition, 6 the sandbox side's event log, 7 the partition's sweep index zset, 8 its reference
-- hash, then the side's transaction records, entitlement hashes and the records' owner-index entries (all in the
-- user's slot; the caller lists what it read).
-- ARGV: user, by (who cleared), now (ms), the number of transaction ids listed, those ids, the number of entitlement
-- names, those names, the user log's cap and TTL (s).
-- Deletes everything the side holds but its event sequence (`events.seq`, so that the next event still follows the
-- last one a receiver saw) and writes the side's `sandbox.cleared` event. Returns JSON {outcome: cleared, coins,
-- transactions, seq, id}, {outcome: empty} when the side holds nothing, or {outcome: changed} when a record or an
-- entitlement not listed appeared since the caller read (nothing written: read again and call again).
local function clear_sandbox(keys, argv)
  local user, by, now = argv[1], argv[2], tonumber(argv[3])
  if type(user) ~= 'string' or #user == 0 or #user > 128 then fail('bad user') end
  if type(by) ~= 'string' or #by == 0 or #by > 128 then fail('bad caller') end
  if not now then fail('bad time') end
  -- The ids themselves are not needed: their records and owner-index entries are in KEYS.
  local at = 4
  local tx_count = count_at(argv, at, 'transaction count')
  at = at + tx_count + 1
  local ent_count = count_at(argv, at, 'entitlement count')
  local ents = {}
  for i = 1, ent_count do ents[i] = argv[at + i] end
  local cap, log_ttl = tonumber(argv[at + ent_count + 1]), tonumber(argv[at + ent_count + 2])
  if not cap or cap < 1 or not log_ttl or log_ttl < 1 then fail('bad bounds') end
  if #keys ~= 8 + 2 * tx_count + ent_count then fail('bad keys') end
  -- What the caller listed must be all there is: a record or an entitlement added since would be left behind.
  if redis.call('ZCARD', keys[3]) ~= tx_count then return cjson.encode({ outcome = 'changed' }) end
  local listed = {}
  for _, name in ipairs(ents) do listed[name] = true end
  local account = redis.call('HGETALL', keys[1])
  for i = 1, #account, 2 do
    local name = string.match(account[i], '^ent:(.+):state$')
    if name and not listed[name] then return cjson.encode({ outcome = 'changed' }) end
  end
  if #account == 0 or (#account == 2 and account[1] == 'events.seq') then
    if tx_count == 0 then return cjson.encode({ outcome = 'empty' }) end
  end
  local coins = num(redis.call('HGET', keys[1], 'coins'), 0)
  local seq = redis.call('HGET', keys[1], 'events.seq')
  redis.call('DEL', keys[1], keys[2], keys[3], keys[4])
  if seq then redis.call('HSET', keys[1], 'events.seq', seq) end
  for i = 9, #keys do redis.call('DEL', keys[i]) end
  for _, name in ipairs(ents) do
    local member = cjson.encode({ 'Sandbox', name, user })
    redis.call('ZREM', keys[7], member)
    redis.call('HDEL', keys[8], member)
  end
  local side_keys = { keys[1], keys[6], keys[5], keys[1] }
  local plan = { user = user, now = now, etype = 'sandbox.cleared', ulog = 2, ulogCap = cap, ulogTtl = log_ttl,
                 side = 'sandbox' }
  local event_seq, id = emit_user_event(side_keys, plan, keys[5], {
    'kind', 'coins', 'delta', n2s(-coins), 'balance', '0', 'by', by, 'reason', 'sandbox_cleared',
  })
  return cjson.encode({ outcome = 'cleared', coins = n2s(coins), transactions = n2s(tx_count), seq = n2s(event_seq),
                        id = id })
end

register('clear_sandbox', clear_sandbox)
