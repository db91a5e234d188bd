-- The ledger's records (first part of the ledger library, LedgerFunctions.swift): reading the plan's keys, the
-- job status, outbound events, coin changes, entitlement values and their recompute, refunds and reversals.
-- Every key is passed in KEYS; the plan (ARGV[3], JSON) refers to keys by their index in KEYS (key_at, in
-- ledger_events.lua).

local function num(v, default)
  local n = tonumber(v)
  if n == nil then return default end
  return n
end

-- The job's final status, through jobs.lua's write_status (the one writer: HSET, EXPIRE, one PUBLISH format).
local function job_status(keys, plan, state, reason, message, result)
  local fields = { 'state', state, 'updated.at', n2s(plan.now), 'kind', plan.kind, 'result', cjson.encode(result) }
  if plan.user then fields[#fields + 1] = 'user'; fields[#fields + 1] = plan.user end
  local clear = nil
  if reason then
    fields[#fields + 1] = 'reason'; fields[#fields + 1] = reason
    fields[#fields + 1] = 'message'; fields[#fields + 1] = message or reason
  else
    clear = { 'reason', 'message' }
  end
  write_status(key_at(keys, 2), plan.jobId, fields, clear, plan.retention, plan.channel)
end

local function emit(keys, plan, fields)
  emit_user_event(keys, plan, key_at(keys, 3), fields)
end

local function coins_change(keys, plan, delta, tid, reason, extra)
  if delta == 0 then return end
  local balance = redis.call('HINCRBY', key_at(keys, 4), 'coins', n2s(delta))
  -- Granted coins still unspent (`coins.granted`, ledger_grants.lua) are at most what the balance holds: a refund
  -- that takes the balance below them took granted coins too (as the clamp allows), which no revocation takes again.
  if delta < 0 then
    local granted = num(redis.call('HGET', key_at(keys, 4), 'coins.granted'), 0)
    if granted > math.max(balance, 0) then
      redis.call('HSET', key_at(keys, 4), 'coins.granted', n2s(math.max(balance, 0)))
    end
  end
  local fields = { 'kind', 'coins', 'delta', n2s(delta), 'balance', n2s(balance), 'transactionId', tid,
                   'reason', reason }
  if extra then for i = 1, #extra do fields[#fields + 1] = extra[i] end end
  emit(keys, plan, fields)
end

-- Entitlement hash value per transaction: "<state>,<purchase ms>,<expires ms or 0>,<upgraded 1|0>", the state `1`
-- granting, `0` revoked, `2` withheld (a repeated free trial: recorded, granting nothing, not revoked either).
local function ent_value(active, tx, withheld)
  local state = active and (withheld and '2' or '1') or '0'
  return state .. ',' .. n2s(tx.purchase or 0) .. ',' .. n2s(tx.expires or 0) .. ',' .. ((tx.upgraded and '1') or '0')
end

-- Sweep index (plan.due zset, plan.dueRef hash, member JSON [env, ent, user]; Keys+LedgerRecords): active or
-- expired-with-auto-renew → due at period end, grace → at grace end, else removed; GT keeps sweeper re-checks.
local function index_due(keys, plan, ent, state, expires, auto, tid)
  if not (plan.due and plan.dueRef) then return end
  local member = cjson.encode({ plan.env, ent.name, plan.user })
  local dk, rk = key_at(keys, plan.due), key_at(keys, plan.dueRef)
  if tid and expires and (state == 'active' or state == 'gracePeriod' or (state == 'expired' and auto == '1')) then
    redis.call('ZADD', dk, 'GT', expires, member); redis.call('HSET', rk, member, tid)
  else redis.call('ZREM', dk, member); redis.call('HDEL', rk, member) end
end

-- Recomputes one entitlement from its transactions and renewal state; writes the account fields and
-- emits an event when state, expiry or auto-renew changed.
local function recompute(keys, plan, ent, tid, reason, extra)
  local entries = redis.call('HGETALL', key_at(keys, ent.key))
  local rows, any_active, any_revoked = {}, false, false
  -- The latest withheld period (a repeated free trial): it grants nothing, but the sweep asks Apple at its end.
  local held, held_tid = 0, nil
  for i = 1, #entries, 2 do
    local a, p, e, u = string.match(entries[i + 1], '^(%d),(%d+),(%d+),(%d)$')
    if a == '1' then
      if u ~= '1' then any_active = true; rows[#rows + 1] = { p = tonumber(p), e = tonumber(e), t = entries[i] } end
    elseif a == '0' then
      any_revoked = true
    elseif a == '2' and u ~= '1' and tonumber(e) > held then
      held, held_tid = tonumber(e), entries[i]
    end
  end
  local meta = key_at(keys, 5)
  local state
  local expires, auto = nil, '0'
  if ent.type == 'nonConsumable' then
    state = any_active and 'active' or 'revoked'
  elseif ent.type == 'nonRenewing' then
    table.sort(rows, function(x, y) return x.p < y.p end)
    local finish = 0
    for _, r in ipairs(rows) do finish = math.max(r.p, finish) + ent.days * 86400000 end
    if #rows > 0 then expires = finish; state = (finish > plan.now) and 'active' or 'expired'
    else state = any_revoked and 'revoked' or 'expired' end
  else
    local latest, latest_tid = 0, nil
    for _, r in ipairs(rows) do if r.e > latest then latest = r.e; latest_tid = r.t end end
    local r = redis.call('HMGET', meta, 'r:' .. ent.name .. ':auto', 'r:' .. ent.name .. ':retry',
                         'r:' .. ent.name .. ':grace')
    local grace = num(r[3], 0)
    if #rows == 0 then
      state = any_revoked and 'revoked' or 'expired'
      if latest > 0 then expires = latest end
    else
      expires = latest
      if latest > plan.now then state = 'active'
      elseif grace > plan.now then state = 'gracePeriod'; expires = grace
      elseif r[2] == '1' then state = 'billingRetry'
      else state = 'expired' end
      if r[1] == '1' then auto = '1' end
    end
    if held > latest and state ~= 'active' and state ~= 'gracePeriod' then
      -- Nothing grants now and a withheld trial ends later: ask Apple at its end for its first paid period.
      local due_auto = (r[1] == '1') and '1' or '0'
      index_due(keys, plan, ent, (held > plan.now) and 'active' or 'expired', held, due_auto, held_tid)
    else
      index_due(keys, plan, ent, state, expires, auto, latest_tid)
    end
  end
  local account = key_at(keys, 4)
  local field = 'ent:' .. ent.name .. ':'
  local fs, fe, fa = field .. 'state', field .. 'expires', field .. 'autorenew'
  local old = redis.call('HMGET', account, fs, fe, fa)
  local new_expires = expires and n2s(expires) or false
  if old[1] == state and old[2] == new_expires and (old[3] or '0') == auto then return end
  redis.call('HSET', account, fs, state, fa, auto)
  if new_expires then redis.call('HSET', account, fe, new_expires) else redis.call('HDEL', account, fe) end
  local fields = { 'kind', 'entitlement', 'entitlement', ent.name, 'state', state, 'autoRenew', auto,
                   'transactionId', tid or '', 'reason', reason }
  if new_expires then fields[#fields + 1] = 'expiresAt'; fields[#fields + 1] = new_expires end
  if extra then for i = 1, #extra do fields[#fields + 1] = extra[i] end end
  emit(keys, plan, fields)
end

local FULL_SHARE = 100000

-- The share of the transaction Apple refunded, in milli-percent: the revocationPercentage of a REFUND_PRORATED
-- revocation, else all of it (REFUND_FULL, FAMILY_REVOKE, no type: a revocation without a stated share).
local function refund_share(tx)
  if tx.rtype == 'REFUND_PRORATED' and tx.rpct then return tx.rpct end
  return FULL_SHARE
end

-- floor(credited × share / 100000) without leaving exact double arithmetic (credited < 2^53).
local function prorate(credited, share)
  local whole_part = math.floor(credited / FULL_SHARE)
  return whole_part * share + math.floor((credited - whole_part * FULL_SHARE) * share / FULL_SHARE)
end

-- Identifies one revocation in the record's `refunds` list: its date (else the notification), and the share when
-- prorated, so a later full refund with the same date is a new revocation while a replay is not.
local function refund_key(tx, note)
  local base = 'x'
  if tx.revoked then base = 'd' .. n2s(tx.revoked)
  elseif note and note.uuid then base = 'n' .. note.uuid end
  local share = refund_share(tx)
  if share < FULL_SHARE then return base .. 'p' .. n2s(share) end
  return base
end

-- The revocation's type and share on the events stream.
local function refund_fields(tx)
  local fields = { 'revocationPercentage', n2s(refund_share(tx)) }
  if tx.rtype then fields[#fields + 1] = 'revocationType'; fields[#fields + 1] = tx.rtype end
  return fields
end

-- Applies a revocation once (keyed by rkey). The standing refund takes back floor(credited × share) in total —
-- rounded down, so a user never loses more than Apple refunded — minus what an earlier revocation of the same
-- standing refund already took (a prorated refund followed by a larger or full one takes only the difference;
-- a smaller one takes nothing but is remembered as seen, so it never applies after a reversal). Clamped at 0
-- when plan.clamp; what clamping leaves is the shortfall. Revokes what the transaction granted. Returns whether
-- the standing refund changed.
local function refund(keys, plan, tx, rec, rkey)
  local rk = key_at(keys, tx.rec)
  local refunds = (rec.refunds or ',') .. rkey .. ','
  local credited = num(rec.coins, 0)
  local share = refund_share(tx)
  local standing = rec.state == 'refunded'
  local taken_debit, taken_short = 0, 0
  if standing then
    if share <= num(rec.rpct, FULL_SHARE) then
      redis.call('HSET', rk, 'refunds', refunds)
      return false
    end
    taken_debit, taken_short = num(rec.debited, 0), num(rec.shortfall, 0)
  end
  local due = math.max(prorate(credited, share) - taken_debit - taken_short, 0)
  local debit, shortfall = due, 0
  if plan.clamp and due > 0 then
    local balance = num(redis.call('HGET', key_at(keys, 4), 'coins'), 0)
    debit = math.min(due, math.max(balance, 0))
    shortfall = due - debit
  end
  redis.call('HSET', rk, 'state', 'refunded', 'debited', n2s(taken_debit + debit),
             'shortfall', n2s(taken_short + shortfall), 'refunds', refunds,
             'rpct', n2s(share), 'updated.at', n2s(plan.now))
  if not standing then redis.call('HSET', rk, 'revoked', n2s(tx.revoked or plan.now)) end
  if tx.rtype then redis.call('HSET', rk, 'rtype', tx.rtype) else redis.call('HDEL', rk, 'rtype') end
  if shortfall > 0 then redis.call('HINCRBY', key_at(keys, 5), 'shortfall', n2s(shortfall)) end
  local extra = refund_fields(tx)
  if shortfall > 0 then extra[#extra + 1] = 'shortfall'; extra[#extra + 1] = n2s(shortfall) end
  coins_change(keys, plan, -debit, tx.tid, 'refund', extra)
  return true
end

local function reverse(keys, plan, tx, rec)
  local debited = num(rec.debited, 0)
  redis.call('HSET', key_at(keys, tx.rec), 'state', 'applied', 'debited', '0', 'shortfall', '0',
             'updated.at', n2s(plan.now))
  redis.call('HDEL', key_at(keys, tx.rec), 'revoked', 'rtype', 'rpct')
  coins_change(keys, plan, debited, tx.tid, 'refund_reversed')
end
