-- The verifier's own step (VerifierFunctions.swift): a job picked up is marked `verifying`, never over a final or
-- verified status.

-- KEYS: job status hash   ARGV: attempt, nowMs, retentionSeconds
local function mark_verifying(keys, argv)
  if is_final(redis.call('HGET', keys[1], 'state')) then return 0 end
  if redis.call('HEXISTS', keys[1], 'verified.at') == 1 then return 0 end
  redis.call('HSET', keys[1], 'state', 'verifying', 'attempt', argv[1], 'updated.at', argv[2])
  redis.call('EXPIRE', keys[1], tonumber(argv[3]))
  return 1
end

register('mark_verifying', mark_verifying)
