-- Spending coins (a part of the ledger library after ledger_transactions.lua, LedgerFunctions.swift): a service
-- takes coins from a user's balance for something the app gave (POST /v1/users/{userId}/coins/spend), never below
-- zero, once per idempotency key, with its event (`coins.spent`, docs/EVENTS.md) written in the same call.
--
-- Account hash fields (Keys+Ledger.swift): `coins` the balance; `coins.spent` every coin ever spent (the audit,
-- LedgerAudit.swift, counts it: balance = credited − refunded − spent); `coins.granted` the granted coins still
-- unspent. Spends draw purchased coins first — the side that reports more consumed to Apple, never helping a refund
-- fraud — so `coins.granted` only drops when the balance falls below it, to the balance.

local SPEND_REASON_MAX, SPEND_KEY_MAX, SPEND_AMOUNT_MAX = 200, 128, 1000000000000

-- Whether the tester mark `key` (a hash: `at`, `by`, `until`?, `reason`?; ledger_testers.lua) names a tester at `now`
-- (ms): marked, with no `until` or one still ahead.
local function tester_active(key, now)
  local mark = redis.call('HMGET', key, 'at', 'until')
  if not mark[1] then return false end
  local ends = tonumber(mark[2])
  return ends == nil or ends > now
end

-- Takes `amount` from one side's account (`account` a key of KEYS, `log` its event log's index) and writes that side's
-- `coins.spent` event, counted in that side's sequence. Returns the event's seq and id.
local function spend_side(keys, side, account_index, log_index, req)
  local account = key_at(keys, account_index)
  local balance = redis.call('HINCRBY', account, 'coins', n2s(-req.amount))
  redis.call('HINCRBY', account, 'coins.spent', n2s(req.amount))
  local granted = num(redis.call('HGET', account, 'coins.granted'), 0)
  if granted > balance then redis.call('HSET', account, 'coins.granted', n2s(balance)) end
  -- emit_user_event counts the sequence in KEYS[4] and logs to plan.ulog: this side's account and log.
  local side_keys = { keys[1], key_at(keys, log_index), keys[3], account }
  local plan = { user = req.user, now = req.now, etype = 'coins.spent', ulog = 2, ulogCap = req.cap,
                 ulogTtl = req.log_ttl, side = side, project = req.project }
  return emit_user_event(side_keys, plan, keys[3], {
    'kind', 'coins', 'delta', n2s(-req.amount), 'balance', n2s(balance), 'amount', n2s(req.amount),
    'idempotencyKey', req.key, 'by', req.by, 'reason', req.reason,
  })
end

-- KEYS: the spend's idempotency record, the calling key's (`tg:{u:<id>}:spend-by:<by>:<key>`), the user's event log,
-- the events stream of the user's partition, the account (at index 4, as emit_user_event expects), then the user's
-- sandbox side's account and event log (LedgerSide.swift), the user's tester mark (`tg:{u:<id>}:tester`,
-- ledger_testers.lua), and the previous release's record of the key (`tg:{u:<id>}:spend:<key>`, per user only), kept
-- both ways for the rolling upgrade (CoinSpend.swift says when it goes): read when the calling key's own record is
-- absent, so a retry of a spend the previous release made replays; and written beside the own record when absent,
-- with the calling key's name in `by`, so a retry that reaches a replica of the previous release replays too (it reads
-- `digest` and `answer` alone). A previous-shape record naming another key is that key's spend: not replayed here.
-- All in the user's slot.
-- ARGV: user, amount, reason, idempotency key, by (the service key's name), now (ms), the record's TTL (s), the
-- user log's cap and TTL (s), the project outside the default one (docs/PROJECTS.md; empty: default), which the
-- events name, and `1` when the sandbox side may pay whoever the user is (the request's `allowSandbox`, or
-- TOLLGATE_SANDBOX_VALUE=everyone), else `0`.
-- Sandbox coins are free to anyone with a TestFlight link, so they are production value only where the deployment or
-- the request says so, or for a tester (a mark with no `until`, or one not passed yet: docs/ARCHITECTURE.md,
-- invariant 11). Where they count, the sandbox side's are spent first, so that a tester's sandbox coins never leave a
-- production balance lower; elsewhere only the primary side's count. Each side that pays writes its own
-- `coins.spent` event, in its own sequence.
-- Answers JSON (numbers as decimal strings):
--   {outcome: spent, amount, balance, seq, id, at, sandboxAmount?, sandboxSeq?, sandboxId?}: spent now, or the
--     remembered answer of an earlier spend with the same key and body (`replayed: true`, nothing written); `balance`
--     is the counted sides' after the spend; seq and id are the primary side's event when it paid anything, else the
--     sandbox side's; `sandboxAmount` what the sandbox side paid, with its event when the primary side paid too;
--   {outcome: insufficient, balance}: the counted balance is below the amount; nothing written, nothing remembered (a
--     retry after a credit may succeed);
--   {outcome: conflict}: the key was used for another amount or reason; nothing written.
local function spend(keys, argv)
  local user, reason, key, by = argv[1], argv[3], argv[4], argv[5]
  local amount, now, ttl = tonumber(argv[2]), tonumber(argv[6]), tonumber(argv[7])
  local cap, log_ttl = tonumber(argv[8]), tonumber(argv[9])
  if type(user) ~= 'string' or #user == 0 then fail('bad user') end
  if not amount or amount < 1 or amount > SPEND_AMOUNT_MAX or amount ~= math.floor(amount) then
    fail('bad amount')
  end
  if type(reason) ~= 'string' or #reason == 0 or #reason > SPEND_REASON_MAX then fail('bad reason') end
  if type(key) ~= 'string' or #key == 0 or #key > SPEND_KEY_MAX or string.find(key, '[^%w%.%_%:%-]') then
    fail('bad idempotency key')
  end
  if type(by) ~= 'string' or #by == 0 then fail('bad caller') end
  if not now or not ttl or ttl < 1 or not cap or cap < 1 or not log_ttl or log_ttl < 1 then fail('bad bounds') end
  if #keys ~= 8 then fail('bad keys') end
  local anyone = argv[11]
  if anyone ~= '0' and anyone ~= '1' then fail('bad sandbox policy') end
  local record = key_at(keys, 1)
  local digest = redis.sha1hex(n2s(amount) .. '\n' .. reason)
  local kept = redis.call('HMGET', record, 'digest', 'answer')
  local previous = key_at(keys, 8)
  if not kept[1] then
    local old = redis.call('HMGET', previous, 'digest', 'answer', 'by')
    -- Written by the previous release (no `by`: per user, as it replayed) or by this key: this key's spend.
    if old[1] and (not old[3] or old[3] == by) then kept = old end
  end
  if kept[1] then
    if kept[1] ~= digest or not kept[2] then return cjson.encode({ outcome = 'conflict' }) end
    local answer = cjson.decode(kept[2])
    answer.replayed = true
    return cjson.encode(answer)
  end
  local primary = num(redis.call('HGET', key_at(keys, 4), 'coins'), 0)
  local sandbox = 0
  if anyone == '1' or tester_active(key_at(keys, 7), now) then
    sandbox = math.max(num(redis.call('HGET', key_at(keys, 5), 'coins'), 0), 0)
  end
  local balance = primary + sandbox
  if balance < amount then return cjson.encode({ outcome = 'insufficient', balance = n2s(balance) }) end
  local from_sandbox = math.min(sandbox, amount)
  local project = argv[10]
  if project == '' then project = nil end
  local req = { user = user, now = now, cap = cap, log_ttl = log_ttl, key = key, by = by, reason = reason,
                project = project }
  local answer = { outcome = 'spent', amount = n2s(amount), balance = n2s(balance - amount), at = n2s(now) }
  if from_sandbox > 0 then
    req.amount = from_sandbox
    local seq, id = spend_side(keys, 'sandbox', 5, 6, req)
    answer.sandboxAmount, answer.sandboxSeq, answer.sandboxId = n2s(from_sandbox), n2s(seq), id
    answer.seq, answer.id = answer.sandboxSeq, id
  end
  if amount > from_sandbox then
    req.amount = amount - from_sandbox
    local seq, id = spend_side(keys, nil, 4, 2, req)
    answer.seq, answer.id = n2s(seq), id
  else
    answer.sandboxSeq, answer.sandboxId = nil, nil
    answer.side = 'sandbox'
  end
  local encoded = cjson.encode(answer)
  redis.call('HSET', record, 'digest', digest, 'answer', encoded)
  redis.call('EXPIRE', record, n2s(ttl))
  if redis.call('EXISTS', previous) == 0 then
    redis.call('HSET', previous, 'digest', digest, 'answer', encoded, 'by', by)
    redis.call('EXPIRE', previous, n2s(ttl))
  end
  return encoded
end

register('spend', spend)
