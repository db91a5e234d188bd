-- Dead-letter operations (DeadLetterFunctions.swift), used by `tollctl dead redrive`.

local DROP = { ['source.stream'] = true, ['source.id'] = true, ['reason'] = true, ['attempts'] = true,
               ['dead.at'] = true, ['pipeline.attempt'] = true, ['pipeline.error'] = true }

-- KEYS: dead stream, source stream, job status hash, backlog hash   ARGV: dead id, job id, nowMs, retentionSeconds
local function redrive(keys, argv)
  local retention = count_at(argv, 4, 'retention')
  local found = redis.call('XRANGE', keys[1], argv[1], argv[1])
  if #found ~= 1 then return nil end
  local fields = found[1][2]
  local cmd = { 'XADD', keys[2], '*' }
  local source = nil
  local job = nil
  local counted, origin = nil, nil
  for j = 1, #fields, 2 do
    local name = fields[j]
    if name == 'source.stream' then source = fields[j + 1] end
    if name == 'job.id' then job = fields[j + 1] end
    if name == 'job.bytes' then counted = tonumber(fields[j + 1]) end
    if name == 'job.source' then origin = fields[j + 1] end
    if not DROP[name] then
      cmd[#cmd + 1] = name
      cmd[#cmd + 1] = fields[j + 1]
    end
  end
  if source ~= nil and source ~= keys[2] then
    fail('entry came from ' .. source .. ', not ' .. keys[2])
  end
  if #cmd == 3 then
    fail('dead entry ' .. argv[1] .. ' has no original fields')
  end
  local id = redis.call(unpack(cmd))
  redis.call('XDEL', keys[1], argv[1])
  if counted and origin then
    redis.call('HINCRBY', keys[4], origin .. '.jobs', 1)
    redis.call('HINCRBY', keys[4], origin .. '.bytes', string.format('%d', counted))
  end
  if job ~= nil and job == argv[2] then
    write_status(keys[3], job, { 'state', 'queued', 'updated.at', argv[3] },
                 { 'reason', 'message', 'attempt', 'next.at' }, retention, nil)
  end
  return id
end

register('redrive', redrive)
