-- The ledger's functions (LedgerFunctions.swift). Every key is passed in KEYS; the plan (ARGV[3], JSON) refers
-- to keys by their index in KEYS.

local function key_at(keys, index)
  local k = keys[tonumber(index) or -1]
  if k == nil then fail('key index ' .. tostring(index) .. ' out of range') end
  return k
end

local function num(v, default)
  local n = tonumber(v)
  if n == nil then return default end
  return n
end

-- Job status (hash, retention, PUBLISH when final), as JobStatus writes it.
local function job_status(keys, plan, state, reason, message, result)
  local jk = key_at(keys, 2)
  local cmd = { 'HSET', jk, 'state', state, 'updated.at', n2s(plan.now), 'kind', plan.kind,
                'result', cjson.encode(result) }
  if plan.user then cmd[#cmd + 1] = 'user'; cmd[#cmd + 1] = plan.user end
  if reason then
    cmd[#cmd + 1] = 'reason'; cmd[#cmd + 1] = reason
    cmd[#cmd + 1] = 'message'; cmd[#cmd + 1] = message or reason
  else
    redis.call('HDEL', jk, 'reason', 'message')
  end
  redis.call(unpack(cmd))
  redis.call('EXPIRE', jk, plan.retention)
  redis.call('PUBLISH', plan.channel, plan.jobId)
end

local function emit(keys, plan, fields)
  local cmd = { 'XADD', key_at(keys, 3), '*', 'user', plan.user }
  for i = 1, #fields do cmd[#cmd + 1] = fields[i] end
  cmd[#cmd + 1] = 'environment'; cmd[#cmd + 1] = plan.env
  cmd[#cmd + 1] = 'at'; cmd[#cmd + 1] = n2s(plan.now)
  redis.call(unpack(cmd))
end

local function coins_change(keys, plan, delta, tid, reason, extra)
  if delta == 0 then return end
  local balance = redis.call('HINCRBY', key_at(keys, 4), 'coins', n2s(delta))
  local fields = { 'kind', 'coins', 'delta', n2s(delta), 'balance', n2s(balance), 'transactionId', tid,
                   'reason', reason }
  if extra then for i = 1, #extra do fields[#fields + 1] = extra[i] end end
  emit(keys, plan, fields)
end

-- Entitlement hash value per transaction: "<active 1|0>,<purchase ms>,<expires ms or 0>,<upgraded 1|0>".
local function ent_value(active, tx)
  return (active and '1' or '0') .. ',' .. n2s(tx.purchase or 0) .. ',' .. n2s(tx.expires or 0) .. ','
    .. ((tx.upgraded and '1') or '0')
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
local function recompute(keys, plan, ent, tid, reason)
  local entries = redis.call('HGETALL', key_at(keys, ent.key))
  local rows, any_active, any_revoked = {}, false, false
  for i = 1, #entries, 2 do
    local a, p, e, u = string.match(entries[i + 1], '^(%d),(%d+),(%d+),(%d)$')
    if a == '1' then
      if u ~= '1' then any_active = true; rows[#rows + 1] = { p = tonumber(p), e = tonumber(e), t = entries[i] } end
    elseif a == '0' then
      any_revoked = true
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
    index_due(keys, plan, ent, state, expires, auto, latest_tid)
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
  emit(keys, plan, fields)
end

local function refund_key(tx, note)
  if tx.revoked then return 'd' .. n2s(tx.revoked) end
  if note and note.uuid then return 'n' .. note.uuid end
  return 'x'
end

-- Reverses an applied transaction once: debits what it credited (clamped at 0 when plan.clamp) and
-- revokes what it granted.
local function refund(keys, plan, tx, rec, rkey)
  local credited = num(rec.coins, 0)
  local debit, shortfall = credited, 0
  if plan.clamp and credited > 0 then
    local balance = num(redis.call('HGET', key_at(keys, 4), 'coins'), 0)
    debit = math.min(credited, math.max(balance, 0))
    shortfall = credited - debit
  end
  redis.call('HSET', key_at(keys, tx.rec), 'state', 'refunded', 'debited', n2s(debit), 'shortfall', n2s(shortfall),
             'refunds', (rec.refunds or ',') .. rkey .. ',', 'revoked', n2s(tx.revoked or plan.now),
             'updated.at', n2s(plan.now))
  if shortfall > 0 then redis.call('HINCRBY', key_at(keys, 5), 'shortfall', n2s(shortfall)) end
  coins_change(keys, plan, -debit, tx.tid, 'refund', shortfall > 0 and { 'shortfall', n2s(shortfall) } or nil)
end

local function reverse(keys, plan, tx, rec)
  local debited = num(rec.debited, 0)
  redis.call('HSET', key_at(keys, tx.rec), 'state', 'applied', 'debited', '0', 'shortfall', '0',
             'updated.at', n2s(plan.now))
  redis.call('HDEL', key_at(keys, tx.rec), 'revoked')
  coins_change(keys, plan, debited, tx.tid, 'refund_reversed')
end

-- Applies one transaction of the owner; returns its result code.
local function apply_tx(keys, plan, tx, changed_ents)
  local rk = key_at(keys, tx.rec)
  local rec = hash_table(redis.call('HGETALL', rk))
  local note = plan.note
  -- A notification's type is evidence only when Apple signed it (V2); a V1 body's type is not.
  local signed_note = note and note.evidence
  local is_refund = tx.revoked ~= nil or (signed_note and (note.type == 'REFUND' or note.type == 'REVOKE'))
  local is_reversal = (not tx.revoked) and signed_note and note.type == 'REFUND_REVERSED'
  local ent = tx.ent and plan.ents[tx.ent] or nil
  -- A product the catalog does not know is recorded, not credited. A transaction credited earlier (its product
  -- since removed from the catalog) still takes Apple's refund or reversal below, from its own record.
  if tx.type == 'unknown' and (rec.state == nil or rec.state == 'unknown_product') then
    if rec.state == nil then
      redis.call('HSET', rk, 'tid', tx.tid, 'otid', tx.otid, 'product', tx.product, 'type', 'unknown',
                 'env', plan.env, 'qty', n2s(tx.qty), 'purchase', n2s(tx.purchase), 'state', 'unknown_product',
                 'coins', '0', 'debited', '0', 'job', plan.jobId, 'created.at', n2s(plan.now))
      redis.call('ZADD', key_at(keys, 6), tx.purchase, tx.tid)
    end
    return 'unknown_product'
  end
  local result = 'duplicate'
  if rec.state == nil or rec.state == 'unknown_product' then
    local credit = 0
    if tx.type == 'consumable' and not tx.family then credit = tx.coins * tx.qty end
    redis.call('HSET', rk, 'tid', tx.tid, 'otid', tx.otid, 'product', tx.product, 'type', tx.type,
               'env', plan.env, 'qty', n2s(tx.qty), 'purchase', n2s(tx.purchase), 'state', 'applied',
               'coins', n2s(credit), 'debited', '0', 'shortfall', '0', 'family', tx.family and '1' or '0',
               'job', plan.jobId, 'created.at', n2s(plan.now), 'updated.at', n2s(plan.now))
    if tx.expires then redis.call('HSET', rk, 'expires', n2s(tx.expires)) end
    if tx.signed then redis.call('HSET', rk, 'signed', n2s(tx.signed)) end
    if ent then redis.call('HSET', rk, 'ent', ent.name) end
    redis.call('ZADD', key_at(keys, 6), tx.purchase, tx.tid)
    rec = { state = 'applied', coins = n2s(credit), refunds = ',' }
    coins_change(keys, plan, credit, tx.tid, 'purchase')
    result = 'applied'
  elseif tx.expires and rec.state == 'applied' and num(tx.signed, 0) > num(rec.signed, 0)
         and tx.expires ~= num(rec.expires, 0) then
    -- A renewal date extension re-signs the same transaction with a new expiresDate.
    redis.call('HSET', rk, 'expires', n2s(tx.expires), 'signed', n2s(tx.signed), 'updated.at', n2s(plan.now))
    result = 'updated'
  end
  if is_refund then
    local rkey = refund_key(tx, note)
    if rec.state == 'applied' and not string.find(rec.refunds or ',', ',' .. rkey .. ',', 1, true) then
      refund(keys, plan, tx, rec, rkey)
      result = (result == 'applied') and 'applied_refunded' or 'refunded'
    end
  elseif is_reversal and rec.state == 'refunded' then
    reverse(keys, plan, tx, rec)
    result = 'refund_reversed'
  end
  if ent then
    local state = redis.call('HGET', rk, 'state')
    local current = { purchase = tx.purchase, expires = num(redis.call('HGET', rk, 'expires'), nil),
                      upgraded = tx.upgraded }
    local value = ent_value(state == 'applied', current)
    if redis.call('HGET', key_at(keys, ent.key), tx.tid) ~= value then
      redis.call('HSET', key_at(keys, ent.key), tx.tid, value)
      changed_ents[tx.ent] = changed_ents[tx.ent] or { tid = tx.tid, reason = result }
    end
  end
  return result
end

local function reresolve() return cjson.encode({ outcome = 'reresolve' }) end

-- Moves events parked for an originalTransactionId back onto the verified stream (KEYS[1]); a forwarded
-- part stays marked as one (it must not write its job's status).
local function unpark(keys, index)
  local pk = key_at(keys, index)
  local items = redis.call('LRANGE', pk, 0, -1)
  for _, item in ipairs(items) do
    local ok, parked = pcall(cjson.decode, item)
    if ok and type(parked) == 'table' and parked.e then
      local cmd = { 'XADD', key_at(keys, 1), '*', 'job.id', parked.j or '', 'event.version', '1', 'event', parked.e,
                    'ledger.unparked', '1' }
      if parked.f then cmd[#cmd + 1] = 'ledger.forwarded'; cmd[#cmd + 1] = '1' end
      redis.call(unpack(cmd))
    end
  end
  if #items > 0 then redis.call('DEL', pk) end
  return #items
end

-- Renewal state is written only for a purchase chain bound to this user (after this call's own bindings).
local function apply_renewals(keys, plan, changed)
  local meta = key_at(keys, 5)
  for _, r in ipairs(plan.renewals or {}) do
    local ent = plan.ents[r.ent]
    if ent and redis.call('GET', key_at(keys, r.bind)) == plan.user then
      local base = 'r:' .. ent.name .. ':'
      local signed = r.signed or (plan.note and plan.note.signed) or plan.verifiedAt
      if signed >= num(redis.call('HGET', meta, base .. 'signed'), 0) then
        redis.call('HSET', meta, base .. 'signed', n2s(signed))
        if r.auto ~= nil then redis.call('HSET', meta, base .. 'auto', n2s(r.auto)) end
        redis.call('HSET', meta, base .. 'retry', r.retry and '1' or '0')
        if r.grace then redis.call('HSET', meta, base .. 'grace', n2s(r.grace))
        else redis.call('HDEL', meta, base .. 'grace') end
        changed[r.ent] = changed[r.ent] or { tid = r.otid, reason = 'renewal' }
      end
    end
  end
end

local TWO_53 = 9007199254740992

local function whole(v, low, high)
  return type(v) == 'number' and v == math.floor(v) and v >= low and v <= high
end

-- Everything the writes below will use is checked before the XACK: a bad plan changes nothing (the entry
-- stays pending and ends in the dead-letter stream).
local function validate(plan)
  if type(plan.user) ~= 'string' or #plan.user == 0 or #plan.user > 128 then fail('bad plan: user') end
  if not whole(plan.now, 0, TWO_53) then fail('bad plan: now') end
  for _, tx in ipairs(plan.txs or {}) do
    if type(tx.tid) ~= 'string' or #tx.tid == 0 then fail('bad plan: transaction id') end
    if not whole(tx.qty, 1, 100) then fail('bad plan: quantity of ' .. tx.tid) end
    if not whole(tx.coins, 0, TWO_53) or tx.coins * tx.qty >= TWO_53 then fail('bad plan: coins of ' .. tx.tid) end
    for _, field in ipairs({ 'purchase', 'expires', 'revoked', 'signed' }) do
      if tx[field] ~= nil and not whole(tx[field], 0, TWO_53) then fail('bad plan: ' .. field .. ' of ' .. tx.tid) end
    end
  end
end

-- Hands the transactions in `tids` (owned by other users) to their owners: a new verified-stream entry with
-- this entry's event and the list of transactions it is limited to. Bounded by hops: each hop applies at
-- least one transaction for the user it resolves to, so a chain ends well before the bound.
local function forward(keys, argv, plan, tids)
  if #tids == 0 then return 0 end
  local hops = plan.hops or 0
  if hops >= 8 then
    redis.call('HINCRBY', key_at(keys, 5), 'forward.dropped', 1)
    return 0
  end
  local found = redis.call('XRANGE', key_at(keys, 1), argv[2], argv[2])
  if #found ~= 1 then return 0 end
  local fields = hash_table(found[1][2])
  if not fields['event'] then return 0 end
  redis.call('XADD', key_at(keys, 1), '*', 'job.id', plan.jobId, 'event.version', fields['event.version'] or '1',
             'event', fields['event'], 'ledger.only', cjson.encode(tids), 'ledger.hops', tostring(hops + 1))
  return 1
end

-- Picks the transaction that pays the order: one of its product, preferring the one bought with the order's
-- token; a transaction bought with another order's token (of this user) pays that order, not this one.
local function order_payer(txs, order, plan)
  local payer, blocked = nil, false
  for _, tx in ipairs(txs) do
    if tx.product == order.product then
      if tx.token_order and tx.token_order ~= plan.orderNo then
        blocked = true
      elseif payer == nil or (tx.aat ~= nil and tx.aat == order.token) then
        payer = tx
      end
    end
  end
  return payer, blocked
end

-- KEYS: verified stream, job hash, events stream, account, ledger meta, transactions zset, notifications
-- set, then the plan's keys.   ARGV: group, entry id, plan JSON.
--
-- Order rules (DESIGN.md invariants 3 and 8) refuse only a client's claim (plan.claim): its explicit orderNo
-- must exist, be paid by a transaction of its product, not bought for another of the user's orders, and not
-- already used for another order. Apple's word (notifications, reconciliation, forwarded parts) is never
-- refused because of an order: it pays the token's pending order when it can, and is applied either way.
local function apply(keys, argv)
  local ok, plan = pcall(cjson.decode, argv[3] or '')
  if not ok or type(plan) ~= 'table' then fail('bad plan') end
  validate(plan)
  local user, txs, note = plan.user, plan.txs or {}, plan.note
  plan.ents = plan.ents or {}
  if plan.by == 'token' then
    if redis.call('HGET', key_at(keys, plan.byKey), 'user') ~= user then return reresolve() end
  elseif plan.by == 'binding' then
    if redis.call('GET', key_at(keys, plan.byKey)) ~= user then return reresolve() end
  end
  local meta = key_at(keys, 5)
  local dup_note = note and note.uuid and redis.call('SISMEMBER', key_at(keys, 7), note.uuid) == 1
  local refused = 0
  for _, tx in ipairs(txs) do
    local owner = redis.call('GET', key_at(keys, tx.bind))
    -- A purchase made with another user's appAccountToken belongs to that user.
    local token_owner, token_order = nil, nil
    if tx.aatKey then
      local t = redis.call('HMGET', key_at(keys, tx.aatKey), 'user', 'order.no')
      token_owner, token_order = t[1], t[2]
    end
    if (owner and owner ~= user) or (token_owner and token_owner ~= user) then
      tx.refused = true; refused = refused + 1
    elseif token_owner == user and token_order then
      tx.token_order = token_order
    end
    tx.bound = (owner == user)
  end
  local reject, order = nil, nil
  if plan.order then
    local okey = key_at(keys, plan.order)
    local o = redis.call('HMGET', okey, 'product', 'state', 'transaction', 'token')
    if not o[1] then
      if plan.claim and plan.explicit then
        reject = { 'unknown_order', 'order ' .. tostring(plan.orderNo) .. ' does not exist for this user' }
      end
    else
      order = { key = okey, product = o[1], state = o[2], token = o[4] }
      local payer, blocked = order_payer(txs, order, plan)
      local paid = payer and redis.call('HGET', key_at(keys, payer.rec), 'order')
      if plan.claim and plan.explicit then
        if payer == nil and blocked then
          reject = { 'wrong_order', 'the transaction was bought for another order of this user' }
        elseif payer == nil then
          reject = { 'product_mismatch', 'no transaction of the order\'s product ' .. order.product }
        elseif payer.refused then
          reject = { 'owned_by_another_user', 'the paying transaction belongs to another user' }
        elseif paid and paid ~= plan.orderNo then
          reject = { 'transaction_already_used', 'the transaction already paid order ' .. paid }
        end
      elseif payer and (payer.refused or (paid and paid ~= plan.orderNo)) then
        payer = nil
      end
      order.payer = payer
    end
  end
  if not reject and plan.claim and #txs > 0 and refused == #txs then
    reject = { 'owned_by_another_user', 'the transaction belongs to another user' }
  end
  if redis.call('XACK', key_at(keys, 1), argv[1], argv[2]) ~= 1 then
    return cjson.encode({ outcome = 'acked_elsewhere' })
  end
  local others = {}
  for _, tx in ipairs(txs) do
    if tx.refused then others[#others + 1] = tx.tid end
  end
  if reject then
    if reject[1] ~= 'unknown_order' then redis.call('HINCRBY', meta, 'fraud:' .. reject[1], 1) end
    forward(keys, argv, plan, others)
    local out = { outcome = 'rejected', reason = reject[1] }
    if not plan.forwarded then job_status(keys, plan, 'rejected', reject[1], reject[2], out) end
    return cjson.encode(out)
  end
  if dup_note then
    if not plan.forwarded then job_status(keys, plan, 'fulfilled', nil, nil, { outcome = 'duplicate' }) end
    return cjson.encode({ outcome = 'duplicate' })
  end
  local results, changed, touched, unknown, unparked = {}, {}, {}, 0, 0
  for _, tx in ipairs(txs) do
    local r
    if tx.refused then
      r = 'owned_by_another_user'
      if plan.claim then redis.call('HINCRBY', meta, 'fraud:owned_by_another_user', 1) end
    else
      if not tx.bound then
        redis.call('SET', key_at(keys, tx.bind), user)
        unparked = unparked + unpark(keys, tx.park)
      end
      r = apply_tx(keys, plan, tx, changed)
      if r == 'unknown_product' then unknown = unknown + 1 end
      if tx.ent then touched[tx.ent] = true end
    end
    results[#results + 1] = { transactionId = tx.tid, productId = tx.product, result = r }
  end
  apply_renewals(keys, plan, changed)
  for i in pairs(changed) do touched[i] = true end
  for i, ent in ipairs(plan.ents) do
    if touched[i] then
      local c = changed[i] or {}
      recompute(keys, plan, ent, c.tid, c.reason or 'recomputed')
    end
  end
  if order and order.payer and order.state ~= 'paid' then
    redis.call('HSET', order.key, 'state', 'paid', 'paid.at', n2s(plan.now), 'transaction', order.payer.tid)
    redis.call('PERSIST', order.key)
    if order.payer.aatKey and order.payer.aat == order.token then
      redis.call('PERSIST', key_at(keys, order.payer.aatKey))
    end
    redis.call('HSET', key_at(keys, order.payer.rec), 'order', plan.orderNo)
    if plan.pending then redis.call('ZREM', key_at(keys, plan.pending), plan.orderNo) end
  end
  if note and note.uuid then redis.call('SADD', key_at(keys, 7), note.uuid) end
  local out = { outcome = 'fulfilled', unparked = unparked,
                coins = num(redis.call('HGET', key_at(keys, 4), 'coins'), 0) }
  out.forwarded = forward(keys, argv, plan, others)
  if #results > 0 then out.transactions = results end
  if #txs > 0 and unknown == #txs then
    out.outcome = 'rejected'; out.reason = 'unknown_product'
    if not plan.forwarded then
      job_status(keys, plan, 'rejected', 'unknown_product', 'the product is not in the catalog', out)
    end
  elseif not plan.forwarded then
    job_status(keys, plan, 'fulfilled', nil, nil, out)
  end
  return cjson.encode(out)
end

-- KEYS: verified stream, job hash, then binding, token and parked keys.   ARGV: group, entry id, plan JSON
-- ({jobId, kind, now, retention, channel, event, binds, tokens, parks}). Parks the event under every
-- originalTransactionId while no owner is known; refuses (reresolve) once one is.
local function park(keys, argv)
  local ok, plan = pcall(cjson.decode, argv[3] or '')
  if not ok or type(plan) ~= 'table' or type(plan.event) ~= 'string' then fail('bad plan') end
  for _, i in ipairs(plan.binds or {}) do
    if redis.call('GET', key_at(keys, i)) then return reresolve() end
  end
  for _, i in ipairs(plan.tokens or {}) do
    if redis.call('HGET', key_at(keys, i), 'user') then return reresolve() end
  end
  local parks = {}
  for _, i in ipairs(plan.parks or {}) do parks[#parks + 1] = key_at(keys, i) end
  if redis.call('XACK', key_at(keys, 1), argv[1], argv[2]) ~= 1 then
    return cjson.encode({ outcome = 'acked_elsewhere' })
  end
  if #parks == 0 then
    if not plan.forwarded then job_status(keys, plan, 'fulfilled', nil, nil, { outcome = 'fulfilled' }) end
    return cjson.encode({ outcome = 'fulfilled' })
  end
  local item = cjson.encode({ j = plan.jobId, e = plan.event, f = plan.forwarded or nil })
  for _, k in ipairs(parks) do redis.call('RPUSH', k, item) end
  if not plan.forwarded then job_status(keys, plan, 'fulfilled', nil, nil, { outcome = 'parked' }) end
  return cjson.encode({ outcome = 'parked' })
end

register('apply', apply)
register('park', park)
