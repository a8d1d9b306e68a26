-- limiter_acquire.lua: take one of the max slots of a named concurrency
-- limit (worker/limiter) for a holder, with a lease; expired holders free
-- their slots by themselves.
-- KEYS[1] slots zset: holder -> lease deadline (ms, Redis clock); a holder
--   holds a slot while the clock is below its deadline
-- ARGV[1] max: slots of the limit (1 to 1000000)
-- ARGV[2] lease_ms: the slot's lease (1 to 31622400000, a year)
-- ARGV[3] holder: the slot's holder, unique per acquire (1 to 256 bytes)
-- returns: {taken, now_ms, at_ms, held}
--   taken 1: the holder holds a slot until at_ms (now_ms + lease_ms); the
--   holder already holding one (a second run of the same call) keeps it,
--   its deadline moved, and counts once. taken 0: all max slots are held;
--   nothing was added, and at_ms is the earliest deadline among the
--   holders: a slot frees then at the latest, unless its holder renews it
--   (or releases it sooner). held: the live holders, this one included
--   when taken. now_ms is the Redis clock.
-- bound: O(log M + 1000) for the M holders (at most the largest max any
--   caller passes, plus the expired): up to 1000 expired holders are
--   dropped per call, and any left over are still not counted as holders.
--
-- The first write is the ZADD (refused out of memory, so the catalog's
-- DenyOOM refuses a taken slot whole), or, when full, a drop of expired
-- holders (deletes only). The key expires with its last deadline, so an
-- unused limit leaves nothing behind.

local max, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
if not string.match(ARGV[1] or '', '^%d+$') or not max or max < 1 or max > 1000000 then
  return redis.error_reply('ERR courier: max must be 1 to 1000000')
end
if not string.match(ARGV[2] or '', '^%d+$') or not lease or lease < 1 or lease > 31622400000 then
  return redis.error_reply('ERR courier: lease_ms must be 1 to 31622400000')
end
local holder = ARGV[3] or ''
if #holder < 1 or #holder > 256 then return redis.error_reply('ERR courier: the holder must be 1 to 256 bytes') end

local k = KEYS[1]
local now = now_ms()
local now_s = ms_str(now)
local expired = redis.call('ZCOUNT', k, '-inf', now_s)
local live = redis.call('ZCARD', k) - expired
local mine = tonumber(redis.call('ZSCORE', k, holder))
local again = mine ~= nil and mine > now

if not again and live >= max then
  local first = redis.call('ZRANGE', k, expired, expired, 'WITHSCORES')
  if expired > 0 then redis.call('ZREMRANGEBYRANK', k, 0, math.min(expired, 1000) - 1) end
  return {0, now, tonumber(first[2]), live}
end

local deadline = now + lease
redis.call('ZADD', k, ms_str(deadline), holder)
if not again then live = live + 1 end
-- the key lives as long as its latest deadline
local ttl = redis.call('PTTL', k)
if ttl < lease then redis.call('PEXPIRE', k, ARGV[2]) end
-- an expired holder taken again above is no longer expired: count again
local gone = math.min(redis.call('ZCOUNT', k, '-inf', now_s), 1000)
if gone > 0 then redis.call('ZREMRANGEBYRANK', k, 0, gone - 1) end
return {1, now, deadline, live}
