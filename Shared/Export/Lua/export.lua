-- The export library (ExportSnapshot.swift): what the exporter and `tollctl export`/`audit --export` read of one
-- user, in one call, so that the account's `events.seq` names exactly the state the rest of the reply shows. It
-- writes nothing (the exporter's acknowledgement is the pipeline's `ack_shared`).

-- KEYS: account hash, grants hash, then the transaction record hashes the event names (none or several).
-- Returns {account, grants, {transaction…}}, each hash flat ({} for a record that does not exist).
local function snapshot(keys)
  local txs = {}
  for i = 3, #keys do txs[#txs + 1] = redis.call('HGETALL', keys[i]) end
  return { redis.call('HGETALL', keys[1]), redis.call('HGETALL', keys[2]), txs }
end

-- KEYS: account hash, grants hash, transactions zset. ARGV: transaction key prefix, first index, most records.
-- Returns {account, grants, transaction count, {transaction…}}: a page of the user's records, oldest first.
local function user(keys, argv)
  local first = count_at(argv, 2, 'first index')
  local limit = count_at(argv, 3, 'limit')
  if limit < 1 or limit > 1000 then fail('bad limit') end
  local list = {}
  for _, id in ipairs(redis.call('ZRANGE', keys[3], first, first + limit - 1)) do
    list[#list + 1] = redis.call('HGETALL', argv[1] .. id)
  end
  return { redis.call('HGETALL', keys[1]), redis.call('HGETALL', keys[2]), redis.call('ZCARD', keys[3]), list }
end

register('snapshot', snapshot)
register('user', user)
