-- The export library (ExportSnapshot.swift): what the exporter and `tollctl export`/`audit --export` read of one
-- user, in one call, so that the account's `events.seq` names exactly the state the rest of the reply shows. It
-- writes nothing.

-- KEYS: account hash, grants hash, and the transaction record hash the event names (or the account again).
-- Returns {account, grants, transaction}, each hash flat ({} for the account repeated as a transaction).
local function snapshot(keys)
  local tx = {}
  if keys[3] ~= keys[1] then tx = redis.call('HGETALL', keys[3]) end
  return { redis.call('HGETALL', keys[1]), redis.call('HGETALL', keys[2]), tx }
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
