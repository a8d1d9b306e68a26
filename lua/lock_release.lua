-- lock_release.lua: give up one hold of a reentrant lock (Redisson RLock
-- layout); the last hold deletes the lock and wakes the waiters.
-- KEYS[1] lock hash: field '<client-uuid>:<holder>' -> hold count
-- ARGV[1] unlock channel (in ARGV, not KEYS: in Redis Cluster a channel is
--   not a key)   ARGV[2] unlock message ('0')   ARGV[3] lease_ms (> 0)
--   ARGV[4] field
-- returns: nil when the field does not hold the lock (nothing changed);
--   0 when holds remain (lease reset to lease_ms); 1 when that was the last
--   hold: the lock was deleted and the unlock message published
-- bound: O(1) plus PUBLISH, O(subscribers of the channel)

local lease = tonumber(ARGV[3])
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end
if redis.call('hexists', KEYS[1], ARGV[4]) == 0 then return nil end
if redis.call('hincrby', KEYS[1], ARGV[4], -1) > 0 then
  redis.call('pexpire', KEYS[1], lease)
  return 0
end
redis.call('del', KEYS[1])
redis.call('publish', ARGV[1], ARGV[2])
return 1
