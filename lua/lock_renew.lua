-- lock_renew.lua: extend the lease of a held lock (the watchdog's renewal;
-- Redisson RLock layout). Safe to repeat.
-- KEYS[1] lock hash: field '<client-uuid>:<holder>' -> hold count
-- ARGV[1] lease_ms (> 0)   ARGV[2] field
-- returns: 1 when the field holds the lock and the lease was reset to
--   lease_ms; 0 when it does not (nothing changed)
-- bound: O(1)

local lease = tonumber(ARGV[1])
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end
if redis.call('hexists', KEYS[1], ARGV[2]) == 1 then
  redis.call('pexpire', KEYS[1], lease)
  return 1
end
return 0
