-- lock_acquire.lua: take or re-enter a reentrant lock (Redisson RLock layout).
-- KEYS[1] lock hash: field '<client-uuid>:<holder>' -> hold count
-- ARGV[1] lease_ms (> 0)   ARGV[2] field
-- returns: nil when the lock was taken or re-entered (hold count + 1, lease
--   set to lease_ms); otherwise the lock's remaining time to live in ms
--   (PTTL; -1 when the key has no expiry)
-- bound: O(1)

local lease = tonumber(ARGV[1])
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end
if redis.call('exists', KEYS[1]) == 0 or redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('hincrby', KEYS[1], ARGV[2], 1)
  redis.call('pexpire', KEYS[1], lease)
  return nil
end
return redis.call('pttl', KEYS[1])
