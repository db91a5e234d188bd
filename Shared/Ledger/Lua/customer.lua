-- The customer library (CustomerInfo.swift): everything GET /v1/users/{userId} shows of one user, read in one call
-- so that coins, entitlements, transactions and orders agree with each other. It writes nothing.

-- KEYS: account hash, ledger meta hash, transactions zset, orders zset, grants hash, then the user's sandbox side's
-- account hash, ledger meta hash and transactions zset (LedgerSide.swift).
-- ARGV: transaction key prefix, order key prefix (both in the user's slot: they carry the user's hash tag, as every
-- key of KEYS does), the most transactions and orders to return (newest first), the sandbox side's transaction key
-- prefix.
-- Returns {account, meta, grants, transaction count, {transaction…}, order count, {order…}, sandbox account, sandbox
-- meta, sandbox transaction count, {sandbox transaction…}}, each hash flat.
local function read(keys, argv)
  local limit = tonumber(argv[3])
  if not limit or limit < 1 or limit > 1000 then fail('bad limit') end
  local function hashes(zset, prefix)
    local total = redis.call('ZCARD', zset)
    local list = {}
    for _, id in ipairs(redis.call('ZREVRANGE', zset, 0, limit - 1)) do
      list[#list + 1] = redis.call('HGETALL', prefix .. id)
    end
    return total, list
  end
  if #keys ~= 8 or type(argv[4]) ~= 'string' then fail('bad keys') end
  local tx_count, txs = hashes(keys[3], argv[1])
  local order_count, orders = hashes(keys[4], argv[2])
  local sbx_count, sbx_txs = hashes(keys[8], argv[4])
  return { redis.call('HGETALL', keys[1]), redis.call('HGETALL', keys[2]), redis.call('HGETALL', keys[5]),
           tx_count, txs, order_count, orders, redis.call('HGETALL', keys[6]), redis.call('HGETALL', keys[7]),
           sbx_count, sbx_txs }
end

register('read', read)
