-- The export library (ExportSnapshot.swift): what the exporter and `tollctl export`/`audit --export` read of one
-- user, in one call, so that the account's `events.seq` names exactly the state the rest of the reply shows; and the
-- exporter's acknowledgement, the only write.

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

-- The exporter's acknowledgement of an events stream entry. The events streams are shared — the notifier's groups,
-- `GET /v1/events` and the janitor read them too — so, unlike the work streams' acknowledgement (jobs.lua), it never
-- deletes the entry: XACK only. With a reason, the first acknowledgement also copies the entry to the dead-letter
-- stream (`source.stream`, `source.id`, `reason`, `dead.at` and its fields), so a second one writes nothing.
-- KEYS: events stream, its dead-letter stream. ARGV: group, entry id, reason ('' for none), now (ms).
-- Returns 1 when this call acknowledged the entry, 0 when it was already acknowledged.
local function ack(keys, argv)
  local acked = redis.call('XACK', keys[1], argv[1], argv[2])
  if acked == 1 and argv[3] ~= '' then
    local cmd = { 'XADD', keys[2], 'MAXLEN', '~', '10000', '*', 'source.stream', keys[1], 'source.id', argv[2],
                  'reason', argv[3], 'dead.at', argv[4] }
    local found = redis.call('XRANGE', keys[1], argv[2], argv[2])
    if #found == 1 then
      for _, value in ipairs(found[1][2]) do cmd[#cmd + 1] = value end
    end
    redis.call(unpack(cmd))
  end
  return acked
end

register('snapshot', snapshot)
register('ack', ack)
register('user', user)
