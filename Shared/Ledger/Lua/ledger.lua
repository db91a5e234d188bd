-- The ledger's functions (last part of the ledger library, after ledger_records.lua and
-- ledger_transactions.lua): `apply` and `park`, with the order rules.

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

-- A call that recorded transactions but changed nothing a user sees (a chain's earlier purchase arriving after its
-- renewal) writes no event; a reader of the records (the exporter, docs/EXPORT.md) still needs to
-- hear of them: one `record` entry on the events stream, no `event.version` (every events reader skips it), naming
-- the call's transactions (`event.txs`).
local function record_entry(keys, plan, txs, seq_before)
  if redis.call('HGET', key_at(keys, 4), 'events.seq') ~= seq_before then return end
  -- Only records this call created or changed (apply marks them): a replay changes nothing and says nothing.
  local tids = {}
  for _, tx in ipairs(txs) do
    if tx.recorded then tids[#tids + 1] = tx.tid end
  end
  if #tids == 0 then return end
  local cmd = { 'XADD', key_at(keys, 3), '*', 'kind', 'record', 'user', plan.user, 'at', n2s(plan.now),
                'event.txs', table.concat(tids, ',') }
  if plan.side then cmd[#cmd + 1] = 'side'; cmd[#cmd + 1] = plan.side end
  if plan.project then cmd[#cmd + 1] = 'project'; cmd[#cmd + 1] = plan.project end
  redis.call(unpack(cmd))
end

-- KEYS: verified stream, job hash, events stream, account, ledger meta, transactions zset, notifications
-- set, then the plan's keys.   ARGV: group, entry id, plan JSON.
--
-- Order rules (docs/ARCHITECTURE.md, invariants 3 and 8) refuse only a client's claim (plan.claim): its explicit
-- orderNo must exist, be paid by a transaction of its product, not bought for another of the user's orders, and not
-- already used for another order. Apple's word (notifications, reconciliation, forwarded parts) is never refused
-- because of an order: it pays the token's pending order when it can, and is applied either way.
local function apply(keys, argv)
  local ok, plan = pcall(cjson.decode, argv[3] or '')
  if not ok or type(plan) ~= 'table' then fail('bad plan') end
  validate(plan)
  local user, txs, note = plan.user, plan.txs or {}, plan.note
  plan.ents = plan.ents or {}
  -- byKey is absent when the key lives in another partition's slot: bindings and token mappings are written
  -- once, so the owner read before the call still holds (see the fulfiller README, "Partitions").
  if plan.by == 'token' and plan.byKey then
    if redis.call('HGET', key_at(keys, plan.byKey), 'user') ~= user then return reresolve() end
  elseif plan.by == 'binding' and plan.byKey then
    if redis.call('GET', key_at(keys, plan.byKey)) ~= user then return reresolve() end
  end
  local meta = key_at(keys, 5)
  local dup_note = note and note.uuid and redis.call('SISMEMBER', key_at(keys, 7), note.uuid) == 1
  local refused, unclaimed = 0, false
  for _, tx in ipairs(txs) do
    -- The binding in this slot, or (another partition's chain) the owner its claim returned.
    local owner = tx.owner
    if tx.bind then owner = redis.call('GET', key_at(keys, tx.bind)) end
    -- A purchase made with another user's appAccountToken belongs to that user.
    local token_owner, token_order = tx.towner, tx.torder
    if tx.aatKey then
      local t = redis.call('HMGET', key_at(keys, tx.aatKey), 'user', 'order.no')
      token_owner, token_order = t[1], t[2]
    end
    if (owner and owner ~= user) or (token_owner and token_owner ~= user) then
      tx.refused = true; refused = refused + 1
    elseif not tx.bind and not owner then
      unclaimed = true
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
  -- A chain of another partition is credited only once claimed for this user (its binding is in that slot):
  -- the caller skipped claims expecting a rejection that did not come, so it claims and calls again.
  if unclaimed and not reject then return cjson.encode({ outcome = 'reresolve', claim = true }) end
  -- Everything after the gate: the entry is this call's (jobs.lua's acknowledge: XACK, then XDEL once done).
  local acked, answer = acknowledge(key_at(keys, 1), argv[1], argv[2], function()
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
    local results, changed, touched, unknown, persist, signals = {}, {}, {}, 0, nil, {}
    local seq_before = redis.call('HGET', key_at(keys, 4), 'events.seq')
    -- Parked events the caller's claims (chains of other partitions) moved back, plus the ones bound here.
    local unparked = num(plan.unparked, 0)
    for _, tx in ipairs(txs) do
      local r
      if tx.refused then
        r = 'owned_by_another_user'
        if plan.claim then redis.call('HINCRBY', meta, 'fraud:owned_by_another_user', 1) end
      else
        if not tx.bound and tx.bind then
          redis.call('SET', key_at(keys, tx.bind), user)
          unparked = unparked + unpark(keys, tx.park)
        end
        local signal
        local existed = tx.rec ~= nil and redis.call('HEXISTS', key_at(keys, tx.rec), 'state') == 1
        r, signal = apply_tx(keys, plan, tx, changed)
        tx.recorded = not existed or (r ~= 'duplicate' and r ~= 'unknown_product')
        if signal then signals[#signals + 1] = signal end
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
        recompute(keys, plan, ent, c.tid, c.reason or 'recomputed', c.extra)
      end
    end
    if order and order.payer and order.state ~= 'paid' then
      redis.call('HSET', order.key, 'state', 'paid', 'paid.at', n2s(plan.now), 'transaction', order.payer.tid)
      -- Paid by a tester's sandbox purchase: the order says so (Order.swift `side`), so no reader takes it for revenue.
      if plan.side then redis.call('HSET', order.key, 'side', plan.side) end
      redis.call('PERSIST', order.key)
      if order.payer.aat and order.payer.aat == order.token then
        -- The token's mapping stops expiring once its order is paid; in another slot, the caller persists it.
        if order.payer.aatKey then redis.call('PERSIST', key_at(keys, order.payer.aatKey))
        else persist = order.payer.aat end
      end
      redis.call('HSET', key_at(keys, order.payer.rec), 'order', plan.orderNo)
      if plan.pending then redis.call('ZREM', key_at(keys, plan.pending), plan.orderNo) end
    end
    if note and note.uuid then redis.call('SADD', key_at(keys, 7), note.uuid) end
    record_entry(keys, plan, txs, seq_before)
    -- `coins` is the balance of the side applied on (`side`: sandbox, a production deployment's sandbox purchase).
    local out = { outcome = 'fulfilled', unparked = unparked, persist = persist,
                  coins = num(redis.call('HGET', key_at(keys, 4), 'coins'), 0), side = plan.side }
    out.forwarded = forward(keys, argv, plan, others)
    if #results > 0 then out.transactions = results end
    if #signals > 0 then out.signals = signals end
    if #txs > 0 and unknown == #txs then
      out.outcome = 'rejected'; out.reason = 'unknown_product'
      if not plan.forwarded then
        job_status(keys, plan, 'rejected', 'unknown_product', 'the product is not in the catalog', out)
      end
    elseif not plan.forwarded then
      job_status(keys, plan, 'fulfilled', nil, nil, out)
    end
    return cjson.encode(out)
  end)
  if not acked then return cjson.encode({ outcome = 'acked_elsewhere' }) end
  return answer
end

-- A V2 notification about no purchase (plan.note: a summary, an external purchase token, RESCIND_CONSENT's
-- appData) has no owner to wait for: it goes to the events stream (plan.events) as one app-level entry, no `user`.
local function emit_app_notification(keys, plan)
  local note = plan.note
  if not (note and plan.events and type(note.type) == 'string') then return false end
  local cmd = { 'XADD', key_at(keys, plan.events), '*', 'kind', 'notification', 'type', note.type }
  if note.subtype then cmd[#cmd + 1] = 'subtype'; cmd[#cmd + 1] = note.subtype end
  if note.uuid then cmd[#cmd + 1] = 'notificationUUID'; cmd[#cmd + 1] = note.uuid end
  if note.signed then cmd[#cmd + 1] = 'signedDate'; cmd[#cmd + 1] = n2s(note.signed) end
  if note.app then cmd[#cmd + 1] = 'appTransactionId'; cmd[#cmd + 1] = note.app end
  cmd[#cmd + 1] = 'environment'; cmd[#cmd + 1] = plan.env or ''
  cmd[#cmd + 1] = 'at'; cmd[#cmd + 1] = n2s(plan.now)
  if plan.project then cmd[#cmd + 1] = 'project'; cmd[#cmd + 1] = plan.project end
  if plan.appSeq then
    -- Schema v2: app-level events count in a sequence of their own, per partition (plan.scope).
    local seq = redis.call('HINCRBY', key_at(keys, plan.appSeq), 'seq', 1)
    local scope = plan.scope or 'app'
    local id = event_id(scope, seq, plan.jobId)
    cmd[#cmd + 1] = 'event.version'; cmd[#cmd + 1] = '2'
    cmd[#cmd + 1] = 'event.id'; cmd[#cmd + 1] = id
    cmd[#cmd + 1] = 'event.type'; cmd[#cmd + 1] = 'app_notification'
    cmd[#cmd + 1] = 'seq'; cmd[#cmd + 1] = n2s(seq)
    cmd[#cmd + 1] = 'event'; cmd[#cmd + 1] = app_event_json(plan, note, seq, id, scope)
  end
  redis.call(unpack(cmd))
  return true
end

-- KEYS: verified stream, job hash, then binding, token and parked keys (and the events stream when plan.events
-- is set).   ARGV: group, entry id, plan JSON ({jobId, kind, now, retention, channel, event, binds, tokens, parks,
-- events?, env?, note?}). Parks the event under every originalTransactionId while no owner is known; refuses
-- (reresolve) once one is. An event with nothing to park is finished here (and its notification emitted).
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
  local acked, answer = acknowledge(key_at(keys, 1), argv[1], argv[2], function()
    if #parks == 0 then
      local out = { outcome = 'fulfilled' }
      if not plan.forwarded and emit_app_notification(keys, plan) then out.emitted = 'notification' end
      if not plan.forwarded then job_status(keys, plan, 'fulfilled', nil, nil, out) end
      return cjson.encode(out)
    end
    local item = cjson.encode({ j = plan.jobId, e = plan.event, f = plan.forwarded or nil })
    for _, k in ipairs(parks) do redis.call('RPUSH', k, item) end
    if not plan.forwarded then job_status(keys, plan, 'fulfilled', nil, nil, { outcome = 'parked' }) end
    return cjson.encode({ outcome = 'parked' })
  end)
  if not acked then return cjson.encode({ outcome = 'acked_elsewhere' }) end
  return answer
end

-- KEYS: the verified stream of the chain's partition, the binding, the parked list.
-- ARGV: user, then (optional) the claiming job's id.
-- Claims a purchase chain (originalTransactionId) for `user` when no one owns it yet (first owner wins, SET NX);
-- a new owner's parked events go back onto the verified stream, to be applied for their owner after the claiming
-- job (`ledger.after`). Returns the owner (JSON {owner, unparked}). Idempotent: a replay returns the same owner and
-- moves nothing but writes the binding again (see below).
local function claim(keys, argv)
  local user, job = argv[1], argv[2]
  if type(user) ~= 'string' or #user == 0 or #user > 128 then fail('bad user') end
  if job ~= nil and (#job == 0 or #job > 128) then fail('bad job') end
  if not redis.call('SET', key_at(keys, 2), user, 'NX') then
    -- Written again, unchanged: a replay after a crash must be a write, so that the WAIT after it covers the binding
    -- (WAIT counts this connection's writes; a call that wrote nothing would return before the binding replicated).
    local owner = redis.call('GET', key_at(keys, 2))
    redis.call('SET', key_at(keys, 2), owner, 'KEEPTTL')
    return cjson.encode({ owner = owner, unparked = 0 })
  end
  return cjson.encode({ owner = user, unparked = unpark(keys, 3, job) })
end

-- KEYS: the target partition's verified stream, the hand-off marker (tg:{K}:fwd:<from>:<entry id>).
-- ARGV: marker TTL (s), then the new entry's field/value pairs.
-- Hands an event (or a part of one) from one partition's verified stream to another's: one new entry, however
-- often it is replayed (the marker, SET NX); a replay only refreshes the marker. Returns 1 when written.
local function hand_over(keys, argv)
  local ttl = tonumber(argv[1])
  if not ttl or ttl < 1 or #argv < 3 or #argv % 2 ~= 1 then fail('bad hand-over') end
  if not redis.call('SET', key_at(keys, 2), '1', 'NX', 'EX', ttl) then
    redis.call('EXPIRE', key_at(keys, 2), ttl)
    return 0
  end
  local cmd = { 'XADD', key_at(keys, 1), '*' }
  for i = 2, #argv do cmd[#cmd + 1] = argv[i] end
  redis.call(unpack(cmd))
  return 1
end

-- KEYS: the verified stream the entry was read from, its job hash.   ARGV: group, entry id, plan JSON
-- ({jobId, kind, now, retention, channel, forwarded, to?}: `to` the partition the whole event went to; absent
-- when its parts went to several, which finishes the job here).
-- Acknowledges an entry after hand_over put it (or its parts) on other partitions, gated by XACK: the job hash
-- records where its status continues (`moved.to`), which the job readers follow.
local function handed_over(keys, argv)
  local ok, plan = pcall(cjson.decode, argv[3] or '')
  if not ok or type(plan) ~= 'table' then fail('bad plan') end
  local acked = acknowledge(key_at(keys, 1), argv[1], argv[2], function()
    if plan.forwarded then return end
    if not plan.to then
      job_status(keys, plan, 'fulfilled', nil, nil, { outcome = 'forwarded' })
    elseif redis.call('EXISTS', key_at(keys, 2)) == 1 then
      write_status(key_at(keys, 2), plan.jobId, { 'moved.to', n2s(plan.to), 'updated.at', n2s(plan.now) }, nil,
                   plan.retention, nil)
    end
  end)
  if not acked then return cjson.encode({ outcome = 'acked_elsewhere' }) end
  return cjson.encode({ outcome = 'forwarded' })
end

register('apply', apply)
register('park', park)
register('claim', claim)
register('hand_over', hand_over)
register('handed_over', handed_over)
