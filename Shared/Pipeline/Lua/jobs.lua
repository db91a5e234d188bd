-- Jobs, shared by every library that acknowledges a work stream's entries or writes a job's status (pipeline,
-- ingest, reconcile, verifier, deadletter, ledger). A job is an entry of a jobs stream plus its status hash
-- (JobStatus.swift): `state` is queued, verifying, retrying, fulfilled, rejected or dead; the last three are final.

local FINAL_STATES = { fulfilled = true, rejected = true, dead = true }

-- Whether a status `state` is final.
local function is_final(state)
  return FINAL_STATES[state] == true
end

-- The fields a job's status hash may hold: the only names write_status takes. JobStatus.Field (Swift) reads the
-- same names; JobStatusWritersTests writes through each writer here and reads through JobStatus.
local STATUS_FIELDS = {
  ['state'] = true, ['kind'] = true, ['user'] = true, ['source'] = true, ['reason'] = true, ['message'] = true,
  ['attempt'] = true, ['next.at'] = true, ['updated.at'] = true, ['verified.at'] = true, ['result'] = true,
  ['moved.to'] = true, ['project'] = true,
}

-- Fails unless every name of the flat name/value list `fields`, and every name in `clear`, is a status field (and
-- `state`, when set, a known one): checked before anything is written.
local function check_status(fields, clear)
  for j = 1, #fields, 2 do
    if not STATUS_FIELDS[fields[j]] then fail('unknown job status field ' .. tostring(fields[j])) end
    if fields[j] == 'state' and FINAL_STATES[fields[j + 1]] == nil
        and fields[j + 1] ~= 'queued' and fields[j + 1] ~= 'verifying' and fields[j + 1] ~= 'retrying' then
      fail('unknown job state ' .. tostring(fields[j + 1]))
    end
  end
  for _, name in ipairs(clear or {}) do
    if not STATUS_FIELDS[name] then fail('unknown job status field ' .. tostring(name)) end
  end
end

-- The one writer of a job's status hash: HSET of the flat name/value list `fields`, HDEL of the names in `clear`,
-- EXPIRE after `ttl` seconds; then, when the hash's state is final and `channel` is given, one PUBLISH on it of
-- `<job id>\n<the whole hash as a JSON object of strings>`, which a waiting `?wait=` request answers from without
-- reading the hash back. The caller checked the fields (check_status) before its first write.
local function write_status(hash, job_id, fields, clear, ttl, channel)
  if #fields > 0 then
    local cmd = { 'HSET', hash }
    for j = 1, #fields do cmd[#cmd + 1] = fields[j] end
    redis.call(unpack(cmd))
  end
  if clear and #clear > 0 then redis.call('HDEL', hash, unpack(clear)) end
  redis.call('EXPIRE', hash, ttl)
  if channel and channel ~= '' and is_final(redis.call('HGET', hash, 'state')) then
    local snapshot = hash_table(redis.call('HGETALL', hash))
    redis.call('PUBLISH', channel, job_id .. '\n' .. cjson.encode(snapshot))
  end
end

-- The one acknowledgement of an entry of a single-group work stream (a jobs or verified stream): XACK `id` in
-- `group`, and only when this XACK acknowledged it run `body` (the stage's writes, which may still read the entry)
-- and delete the entry (XDEL): what such a stream holds is what is still unfinished, and a finished job's payload
-- never waits for the janitor. Not for the events streams, which several groups read and the janitor trims.
-- Returns false when someone acknowledged the entry before, else true and what `body` returned.
local function acknowledge(stream, group, id, body)
  if redis.call('XACK', stream, group, id) ~= 1 then return false end
  local result = body()
  redis.call('XDEL', stream, id)
  return true, result
end

-- XADDs the name/value list `entry` to `stream` and writes the status `status` (a name/value list, not final) on
-- `hash`, kept `ttl` seconds: a job and its first status, in one step.
local function append_with_status(stream, entry, hash, status, ttl)
  check_status(status)
  local xadd = { 'XADD', stream, '*' }
  for j = 1, #entry do xadd[#xadd + 1] = entry[j] end
  redis.call(unpack(xadd))
  write_status(hash, nil, status, nil, ttl, nil)
end
