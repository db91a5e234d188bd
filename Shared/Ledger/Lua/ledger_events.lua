-- The ledger's outbound events, schema v2 (first part of the ledger library; docs/EVENTS.md): one JSON object per
-- change, written in the same call that applies the change, with a per-user `seq` (1, 2, 3… no gaps) and an `id`
-- stored with it. The JSON is written here, field by field in a fixed order, so that every reader (webhooks, the
-- pull API, an app's own consumer) forwards the same bytes and never re-encodes them.

-- Every key is passed in KEYS; a plan refers to keys by their index in KEYS.
local function key_at(keys, index)
  local k = keys[tonumber(index) or -1]
  if k == nil then fail('key index ' .. tostring(index) .. ' out of range') end
  return k
end

-- Milliseconds since 1970 as ISO 8601 UTC with milliseconds (`2026-11-26T20:16:35.123Z`), as every HTTP API answers
-- times. Days to a civil date after Howard Hinnant's `civil_from_days`.
local function iso8601(ms)
  local seconds = math.floor(ms / 1000)
  local milli = ms - seconds * 1000
  local days = math.floor(seconds / 86400)
  local rem = seconds - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local day = doy - math.floor((153 * mp + 2) / 5) + 1
  local month = (mp < 10) and (mp + 3) or (mp - 9)
  local year = yoe + era * 400 + ((month <= 2) and 1 or 0)
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', year, month, day, math.floor(rem / 3600),
                       math.floor(rem % 3600 / 60), rem % 60, milli)
end

-- A JSON object written in order: add(name, value) takes a string, an integer, a boolean or nil (left out);
-- raw(name, text) takes text that is JSON already (`null`).
local function json_object()
  local parts = {}
  local o = {}
  function o.add(name, value)
    if value == nil then return end
    local text
    if type(value) == 'number' then text = n2s(value)
    elseif type(value) == 'boolean' then text = value and 'true' or 'false'
    else text = cjson.encode(tostring(value)) end
    parts[#parts + 1] = '"' .. name .. '":' .. text
  end
  function o.raw(name, text) parts[#parts + 1] = '"' .. name .. '":' .. text end
  function o.text() return '{' .. table.concat(parts, ',') .. '}' end
  return o
end

-- Apple's environment names as the events spell them.
local function environment_name(env)
  if env == 'Production' then return 'production' end
  if env == 'Sandbox' then return 'sandbox' end
  return string.lower(env or '')
end

local OWNERSHIP = { [true] = 'FAMILY_SHARED', [false] = 'PURCHASED' }

-- The event's type (docs/EVENTS.md, "Types") from the change: the plan's own type when the call makes one kind of
-- change (`coins.spent`, ledger_spend.lua); a coin change is named by its ledger reason; an entitlement change by
-- the state it reached, and for an active one by what made it so.
local function event_type(f, tx, plan)
  if plan.etype then return plan.etype end
  if f.kind == 'coins' then return f.reason end
  local reason, state = f.reason, f.state
  if reason == 'refunded' or reason == 'applied_refunded' then
    if f.revocationType == 'FAMILY_REVOKE' then return 'revoked' end
    return 'refund'
  end
  if reason == 'refund_reversed' then return 'refund_reversed' end
  if state == 'revoked' then return 'revoked' end
  if state == 'expired' then return 'expired' end
  if state == 'gracePeriod' then return 'grace_period' end
  if state == 'billingRetry' then return 'billing_retry' end
  if reason == 'applied' or reason == 'trial_withheld' then
    if tx and tx.tid ~= tx.otid then return 'renewal' end
    return 'purchase'
  end
  if reason == 'updated' then return 'renewal_extended' end
  if reason == 'renewal' then
    if plan.note and plan.note.type == 'DID_RENEW' then return 'renewal' end
    return 'renewal_preference'
  end
  return 'entitlement_changed'
end

-- The plan's transaction `tid`, if the plan carries it (a renewal-only change names a chain, not a transaction).
local function plan_tx(plan, tid)
  if not tid or tid == '' then return nil end
  for _, tx in ipairs(plan.txs or {}) do
    if tx.tid == tid then return tx end
  end
  return nil
end

-- A stable, opaque event id: unique per (user, seq, job), assigned here and stored with the event.
local function event_id(scope, seq, job)
  return 'evt_' .. string.sub(redis.sha1hex(scope .. '\n' .. n2s(seq) .. '\n' .. (job or '')), 1, 32)
end

-- Whose sequence an event counts in: the user's, or the user's sandbox side's (`<user>~sandbox`: `~` is in no user
-- id). The event ids and the notifier's cursors (notifier.lua) are scoped by it.
-- A project other than the default one (plan.project, docs/PROJECTS.md) prefixes it: `<project>/<user>` (`/` is in no
-- user or project id), so two projects' users of one id count apart.
local function side_scope(user, side, project)
  local scope = user
  if side == 'sandbox' then scope = user .. '~sandbox' end
  if project then scope = project .. '/' .. scope end
  return scope
end

-- The v2 JSON of one user change: `f` the change's flat fields (as the v1 entry has them), `tx` its transaction.
-- A change of no store (a spend: plan.env absent) has no `store` and `environment`.
local function user_event_json(plan, f, tx, seq, id, etype)
  local o = json_object()
  o.add('id', id); o.add('type', etype); o.add('userId', plan.user); o.add('seq', seq)
  o.add('at', iso8601(plan.now))
  if plan.env then o.add('store', 'app_store'); o.add('environment', environment_name(plan.env))
  elseif plan.side == 'sandbox' then o.add('environment', 'sandbox') end
  -- The user's sandbox side (a production deployment's App Review and TestFlight purchases) counts its own `seq`.
  o.add('side', plan.side)
  o.add('project', plan.project)
  if tx then
    o.add('productId', tx.product); o.add('transactionId', tx.tid); o.add('originalTransactionId', tx.otid)
    o.add('quantity', tx.qty); o.add('price', tx.price); o.add('currency', tx.cur); o.add('storefront', tx.sf)
    o.add('offerType', tx.otype); o.add('offerIdentifier', tx.oid); o.add('ownershipType', OWNERSHIP[tx.family == true])
    o.add('purchasedAt', tx.purchase and iso8601(tx.purchase) or nil)
  elseif f.transactionId and f.transactionId ~= '' then
    o.add('originalTransactionId', f.transactionId)
  end
  if f.kind == 'coins' then
    o.add('delta', tonumber(f.delta)); o.add('balance', tonumber(f.balance))
    o.add('shortfall', tonumber(f.shortfall))
    -- A spend's own members (ledger_spend.lua): absent from every other coin change.
    o.add('amount', tonumber(f.amount)); o.add('idempotencyKey', f.idempotencyKey); o.add('by', f.by)
  else
    o.add('entitlement', f.entitlement); o.add('state', f.state)
    o.add('expiresAt', f.expiresAt and iso8601(tonumber(f.expiresAt)) or nil)
    o.add('autoRenew', f.autoRenew == '1')
  end
  o.add('revocationType', f.revocationType); o.add('revocationPercentage', tonumber(f.revocationPercentage))
  o.add('reason', f.reason); o.add('jobId', plan.jobId)
  -- Apple's own signed JWS of the change (TOLLGATE_EVENTS_INCLUDE_APPLE), for a receiver to check itself.
  o.add('apple', plan.apple)
  return o.text()
end

-- Appends one event to the user's own log (plan.ulog: a stream whose entry ids are `<seq>-0`, so a reader asks for
-- what follows a seq), keeping the newest plan.ulogCap and the key for plan.ulogTtl seconds after its last event.
local function user_log(keys, plan, seq, id, body)
  if not plan.ulog then return end
  local key = key_at(keys, plan.ulog)
  redis.call('XADD', key, 'MAXLEN', n2s(plan.ulogCap or 1000), n2s(seq) .. '-0', 'id', id, 'event', body)
  redis.call('EXPIRE', key, n2s(plan.ulogTtl or 7776000))
end

-- Writes one user change to the events stream (v1 fields for one more release, then the v2 `event`, with
-- `event.id`, `event.type` and `seq` beside it so that readers route and filter without parsing it) and to the
-- user's log. The sequence lives in the account hash (`events.seq`), in the same slot and call as the change.
-- Returns the event's seq and id.
local function emit_user_event(keys, plan, events_key, flat)
  local f = hash_table(flat)
  local seq = redis.call('HINCRBY', key_at(keys, 4), 'events.seq', 1)
  local id = event_id(side_scope(plan.user, plan.side, plan.project), seq, plan.jobId)
  local tx = plan_tx(plan, f.transactionId)
  local etype = event_type(f, tx, plan)
  local body = user_event_json(plan, f, tx, seq, id, etype)
  local cmd = { 'XADD', events_key, '*', 'user', plan.user }
  for i = 1, #flat do cmd[#cmd + 1] = flat[i] end
  if plan.env then cmd[#cmd + 1] = 'environment'; cmd[#cmd + 1] = plan.env end
  if plan.side then cmd[#cmd + 1] = 'side'; cmd[#cmd + 1] = plan.side end
  if plan.project then cmd[#cmd + 1] = 'project'; cmd[#cmd + 1] = plan.project end
  cmd[#cmd + 1] = 'at'; cmd[#cmd + 1] = n2s(plan.now)
  cmd[#cmd + 1] = 'event.version'; cmd[#cmd + 1] = '2'
  cmd[#cmd + 1] = 'event.id'; cmd[#cmd + 1] = id
  cmd[#cmd + 1] = 'event.type'; cmd[#cmd + 1] = etype
  cmd[#cmd + 1] = 'seq'; cmd[#cmd + 1] = n2s(seq)
  cmd[#cmd + 1] = 'event'; cmd[#cmd + 1] = body
  -- Every transaction this call applied, when there are several: one call may record transactions that get no
  -- event of their own (a chain's history applied with its renewal), and the exporter writes each record's row.
  local txs = plan.txs or {}
  if #txs > 1 then
    local tids = {}
    for i = 1, #txs do tids[i] = txs[i].tid end
    cmd[#cmd + 1] = 'event.txs'; cmd[#cmd + 1] = table.concat(tids, ',')
  end
  redis.call(unpack(cmd))
  user_log(keys, plan, seq, id, body)
  return seq, id
end

-- The v2 JSON of an app-level notification (no user): its own sequence, per partition (`seqScope`), counted in
-- plan.appSeq (a hash in the events stream's slot).
local function app_event_json(plan, note, seq, id, scope)
  local o = json_object()
  o.add('id', id); o.add('type', 'app_notification'); o.raw('userId', 'null'); o.add('seq', seq)
  o.add('seqScope', scope); o.add('at', iso8601(plan.now)); o.add('store', 'app_store')
  o.add('environment', environment_name(plan.env)); o.add('notificationType', note.type)
  o.add('subtype', note.subtype); o.add('notificationUUID', note.uuid)
  o.add('signedAt', note.signed and iso8601(note.signed) or nil); o.add('appTransactionId', note.app)
  o.add('jobId', plan.jobId); o.add('project', plan.project)
  return o.text()
end
