-- limiter_extend.lua: renew the lease of a slot of a named concurrency
-- limit (worker/limiter), if its holder still holds it. Safe to repeat.
-- KEYS[1] slots zset: holder -> lease deadline (ms, Redis clock)
-- ARGV[1] lease_ms: the new lease, from now (1 to 31622400000, a year)
-- ARGV[2] holder (1 to 256 bytes)
-- returns: {held, now_ms, at_ms}
--   held 1: the holder's deadline is now at_ms (now_ms + lease_ms).
--   held 0: the holder holds no slot: it is absent (released, or dropped
--   after its lease passed), or its lease has passed (it is dropped now:
--   another caller may already have counted its slot free, so it is never
--   revived); at_ms is now_ms. now_ms is the Redis clock.
-- bound: O(log M) for the M holders of the limit.

local lease = tonumber(ARGV[1])
if not string.match(ARGV[1] or '', '^%d+$') or not lease or lease < 1 or lease > 31622400000 then
  return redis.error_reply('ERR courier: lease_ms must be 1 to 31622400000')
end
local holder = ARGV[2] or ''
if #holder < 1 or #holder > 256 then return redis.error_reply('ERR courier: the holder must be 1 to 256 bytes') end

local k = KEYS[1]
local now = now_ms()
local mine = tonumber(redis.call('ZSCORE', k, holder))
if mine == nil then return {0, now, now} end
if mine <= now then
  redis.call('ZREM', k, holder)
  return {0, now, now}
end
local deadline = now + lease
redis.call('ZADD', k, 'XX', ms_str(deadline), holder)
if redis.call('PTTL', k) < lease then redis.call('PEXPIRE', k, ARGV[1]) end
return {1, now, deadline}
