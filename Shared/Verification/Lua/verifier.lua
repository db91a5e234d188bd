-- The verifier's own step (VerifierFunctions.swift): a job picked up is marked `verifying`, never over a final or
-- verified status.

-- KEYS: job status hash   ARGV: attempt, nowMs, retentionSeconds
local function mark_verifying(keys, argv)
  local retention = count_at(argv, 3, 'retention')
  if is_final(redis.call('HGET', keys[1], 'state')) then return 0 end
  if redis.call('HEXISTS', keys[1], 'verified.at') == 1 then return 0 end
  local status = { 'state', 'verifying', 'attempt', argv[1], 'updated.at', argv[2] }
  check_status(status)
  write_status(keys[1], nil, status, nil, retention, nil)
  return 1
end

register('mark_verifying', mark_verifying)
