-- Jobs, shared by the libraries that write them (ingest, reconcile, verifier). A job is an entry of a jobs stream
-- plus its status hash (JobStatus.swift): `state` is queued, verifying, retrying, fulfilled, rejected or dead;
-- the last three are final.

local FINAL_STATES = { fulfilled = true, rejected = true, dead = true }

-- Whether a status `state` is final.
local function is_final(state)
  return FINAL_STATES[state] == true
end

-- XADDs the name/value list `entry` to `stream`, HSETs the name/value list `status` on `hash` and makes it
-- expire after `ttl` seconds: a job and its first status, in one step.
local function append_with_status(stream, entry, hash, status, ttl)
  local xadd = { 'XADD', stream, '*' }
  for j = 1, #entry do xadd[#xadd + 1] = entry[j] end
  redis.call(unpack(xadd))
  local hset = { 'HSET', hash }
  for j = 1, #status do hset[#hset + 1] = status[j] end
  redis.call(unpack(hset))
  redis.call('EXPIRE', hash, ttl)
end
