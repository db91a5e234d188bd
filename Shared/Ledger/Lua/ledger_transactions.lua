-- The ledger's transactions (second part of the ledger library, after ledger_records.lua): applying one
-- transaction, parked events, renewal state, the plan's validation and forwarding to other owners.

-- Whether a repeated free trial is withheld (plan.trials = 'refuse'): the user's introductory offer period of a
-- subscription group, a free trial, in another purchase chain than the group's first introductory offer (its
-- originalTransactionId, `intro:<group>` in the ledger hash, recorded whatever the setting).
local function withholds(keys, plan, tx)
  if not (tx.intro and tx.group) then return false end
  local meta, field = key_at(keys, 5), 'intro:' .. tx.group
  local first = redis.call('HGET', meta, field)
  if not first then
    redis.call('HSET', meta, field, tx.otid)
    return false
  end
  return first ~= tx.otid and tx.trial == true and plan.trials == 'refuse'
end

-- Whether a promotional offer's redemption matches a signature of ingest's: the order its token maps to (tx.osig)
-- carries that token and `offer:<offer id>`.
local function offer_signed(keys, tx)
  if not tx.osig or not tx.aat or tx.offer == '' then return false end
  local o = redis.call('HMGET', key_at(keys, tx.osig), 'token', 'offer:' .. tx.offer)
  return o[1] == tx.aat and o[2] ~= false
end

-- Applies one transaction of the owner; returns its result code, and a fraud signal when its first application
-- found one (`offer_unsigned`: a promotional offer redeemed without a signature of Tollgate's; credited all the same).
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
      if tx.txo then redis.call('SET', key_at(keys, tx.txo), plan.user) end
    end
    return 'unknown_product'
  end
  local result, signal = 'duplicate', nil
  if rec.state == nil or rec.state == 'unknown_product' then
    local credit = 0
    if tx.type == 'consumable' and not tx.family then credit = tx.coins * tx.qty end
    redis.call('HSET', rk, 'tid', tx.tid, 'otid', tx.otid, 'product', tx.product, 'type', tx.type,
               'env', plan.env, 'qty', n2s(tx.qty), 'purchase', n2s(tx.purchase), 'state', 'applied',
               'coins', n2s(credit), 'debited', '0', 'shortfall', '0', 'family', tx.family and '1' or '0',
               'job', plan.jobId, 'created.at', n2s(plan.now), 'updated.at', n2s(plan.now))
    if tx.expires then redis.call('HSET', rk, 'expires', n2s(tx.expires)) end
    if tx.signed then redis.call('HSET', rk, 'signed', n2s(tx.signed)) end
    -- Revenue facts, as Apple stated them (docs/EVENTS.md): price in milliunits of currency, storefront, offer.
    if tx.price then redis.call('HSET', rk, 'price', n2s(tx.price)) end
    if tx.cur then redis.call('HSET', rk, 'currency', tx.cur) end
    if tx.sf then redis.call('HSET', rk, 'storefront', tx.sf) end
    if tx.otype then redis.call('HSET', rk, 'offer.type', n2s(tx.otype)) end
    if tx.oid then redis.call('HSET', rk, 'offer.id', tx.oid) end
    if ent then redis.call('HSET', rk, 'ent', ent.name) end
    redis.call('ZADD', key_at(keys, 6), tx.purchase, tx.tid)
    if tx.txo then redis.call('SET', key_at(keys, tx.txo), plan.user) end
    rec = { state = 'applied', coins = n2s(credit), refunds = ',' }
    coins_change(keys, plan, credit, tx.tid, 'purchase')
    result = 'applied'
    if withholds(keys, plan, tx) then
      redis.call('HSET', rk, 'withheld', '1')
      rec.withheld = '1'
      result = 'trial_withheld'
    end
    if tx.offer then
      local signed = offer_signed(keys, tx)
      redis.call('HSET', rk, 'offer', tx.offer, 'offer.signed', signed and '1' or '0')
      if not signed then
        redis.call('HINCRBY', key_at(keys, 5), 'fraud:offer_unsigned', 1)
        signal = 'offer_unsigned'
      end
    end
  elseif tx.expires and rec.state == 'applied' and num(tx.signed, 0) > num(rec.signed, 0)
         and tx.expires ~= num(rec.expires, 0) then
    -- A renewal date extension re-signs the same transaction with a new expiresDate.
    redis.call('HSET', rk, 'expires', n2s(tx.expires), 'signed', n2s(tx.signed), 'updated.at', n2s(plan.now))
    result = 'updated'
  end
  local refund_extra = nil
  if is_refund then
    local rkey = refund_key(tx, note)
    if (rec.state == 'applied' or rec.state == 'refunded')
       and not string.find(rec.refunds or ',', ',' .. rkey .. ',', 1, true)
       and refund(keys, plan, tx, rec, rkey) then
      result = (result == 'applied') and 'applied_refunded' or 'refunded'
      refund_extra = refund_fields(tx)
    end
  elseif is_reversal and rec.state == 'refunded' then
    reverse(keys, plan, tx, rec)
    result = 'refund_reversed'
  end
  if ent then
    local state = redis.call('HGET', rk, 'state')
    local current = { purchase = tx.purchase, expires = num(redis.call('HGET', rk, 'expires'), nil),
                      upgraded = tx.upgraded }
    local value = ent_value(state == 'applied', current, rec.withheld == '1')
    if redis.call('HGET', key_at(keys, ent.key), tx.tid) ~= value then
      redis.call('HSET', key_at(keys, ent.key), tx.tid, value)
      changed_ents[tx.ent] = changed_ents[tx.ent] or { tid = tx.tid, reason = result, extra = refund_extra }
    end
  end
  return result, signal
end

local function reresolve() return cjson.encode({ outcome = 'reresolve' }) end

-- Moves events parked for an originalTransactionId back onto the verified stream (KEYS[1]); a forwarded
-- part stays marked as one (it must not write its job's status).
-- `after`: the job of the claim that moved them (a chain of another partition), recorded as `ledger.after` so that
-- each waits for that submission's own apply before its own (LedgerApplier.awaitClaimant).
local function unpark(keys, index, after)
  local pk = key_at(keys, index)
  local items = redis.call('LRANGE', pk, 0, -1)
  for _, item in ipairs(items) do
    local ok, parked = pcall(cjson.decode, item)
    if ok and type(parked) == 'table' and parked.e then
      local cmd = { 'XADD', key_at(keys, 1), '*', 'job.id', parked.j or '', 'event.version', '1', 'event', parked.e,
                    'ledger.unparked', '1' }
      if parked.f then cmd[#cmd + 1] = 'ledger.forwarded'; cmd[#cmd + 1] = '1' end
      if after then cmd[#cmd + 1] = 'ledger.after'; cmd[#cmd + 1] = after end
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
    local bound = r.bound
    if r.bind then bound = redis.call('GET', key_at(keys, r.bind)) == plan.user end
    if ent and bound then
      local base = 'r:' .. ent.name .. ':'
      local signed = r.signed or (plan.note and plan.note.signed) or plan.verifiedAt
      if signed >= num(redis.call('HGET', meta, base .. 'signed'), 0) then
        redis.call('HSET', meta, base .. 'signed', n2s(signed))
        if r.auto ~= nil then redis.call('HSET', meta, base .. 'auto', n2s(r.auto)) end
        redis.call('HSET', meta, base .. 'retry', r.retry and '1' or '0')
        if r.grace then redis.call('HSET', meta, base .. 'grace', n2s(r.grace))
        else redis.call('HDEL', meta, base .. 'grace') end
        -- What the customer API shows of the renewal (Keys+LedgerRecords): absent in Apple's word, absent here.
        for field, value in pairs({ aprod = r.aprod, intent = r.intent, winback = r.winback }) do
          if value ~= nil then redis.call('HSET', meta, base .. field, type(value) == 'number' and n2s(value) or value)
          else redis.call('HDEL', meta, base .. field) end
        end
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
  if plan.apple ~= nil and (type(plan.apple) ~= 'string' or #plan.apple > 65536) then fail('bad plan: apple') end
  if plan.side ~= nil and plan.side ~= 'sandbox' then fail('bad plan: side') end
  if plan.ulog and not (whole(plan.ulogCap, 1, 1000000) and whole(plan.ulogTtl, 1, TWO_53)) then
    fail('bad plan: user event log bounds')
  end
  for _, tx in ipairs(plan.txs or {}) do
    if type(tx.tid) ~= 'string' or #tx.tid == 0 then fail('bad plan: transaction id') end
    if not whole(tx.qty, 1, 100) then fail('bad plan: quantity of ' .. tx.tid) end
    if not whole(tx.coins, 0, TWO_53) or tx.coins * tx.qty >= TWO_53 then fail('bad plan: coins of ' .. tx.tid) end
    for _, field in ipairs({ 'purchase', 'expires', 'revoked', 'signed' }) do
      if tx[field] ~= nil and not whole(tx[field], 0, TWO_53) then fail('bad plan: ' .. field .. ' of ' .. tx.tid) end
    end
    if tx.rpct ~= nil and not whole(tx.rpct, 0, 100000) then fail('bad plan: revocation percentage of ' .. tx.tid) end
    if tx.rtype ~= nil and (type(tx.rtype) ~= 'string' or #tx.rtype > 64) then
      fail('bad plan: revocation type of ' .. tx.tid)
    end
    if tx.offer ~= nil and (type(tx.offer) ~= 'string' or #tx.offer > 128) then
      fail('bad plan: offer of ' .. tx.tid)
    end
    if tx.group ~= nil and (type(tx.group) ~= 'string' or #tx.group == 0) then fail('bad plan: group of ' .. tx.tid) end
    if tx.price ~= nil and not whole(tx.price, 0, TWO_53) then fail('bad plan: price of ' .. tx.tid) end
    if tx.otype ~= nil and not whole(tx.otype, 0, 1000) then fail('bad plan: offer type of ' .. tx.tid) end
    for _, field in ipairs({ 'cur', 'sf', 'oid' }) do
      if tx[field] ~= nil and (type(tx[field]) ~= 'string' or #tx[field] > 128) then
        fail('bad plan: ' .. field .. ' of ' .. tx.tid)
      end
    end
    if tx.txo ~= nil and not whole(tx.txo, 1, 100000) then fail('bad plan: owner index of ' .. tx.tid) end
  end
  for _, r in ipairs(plan.renewals or {}) do
    if r.intent ~= nil and not whole(r.intent, 0, 1000) then fail('bad plan: expiration intent') end
    for _, field in ipairs({ 'aprod', 'winback' }) do
      if r[field] ~= nil and (type(r[field]) ~= 'string' or #r[field] > 1400) then
        fail('bad plan: renewal ' .. field)
      end
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
