-- limiter_release.lua: give back the slot of a named concurrency limit
-- (worker/limiter) a holder holds, and tell the limit's waiters.
-- KEYS[1] slots zset: holder -> lease deadline (ms, Redis clock)
-- ARGV[1] free channel (in ARGV, not KEYS: a channel is not a key; it
--   shares the key's hash tag, so SPUBLISH reaches the key's node)
-- ARGV[2] holder (1 to 256 bytes)
-- returns: 1 when the holder held a slot: it is free now, and one message
--   went on the channel (record.lua's announce: SPUBLISH, or PUBLISH where
--   the server lacks it); 0 when it held none: absent (released before, or
--   dropped after its lease passed) or its lease had passed (dropped now,
--   no message: others count it free already). A second run finds the
--   holder absent and returns 0.
-- bound: O(log M) for the M holders, plus the publish, O(subscribers).

local holder = ARGV[2] or ''
if #holder < 1 or #holder > 256 then return redis.error_reply('ERR courier: the holder must be 1 to 256 bytes') end
if (ARGV[1] or '') == '' then return redis.error_reply('ERR courier: release needs the free channel') end

local k = KEYS[1]
local mine = tonumber(redis.call('ZSCORE', k, holder))
if mine == nil then return 0 end
local now = now_ms()
redis.call('ZREM', k, holder)
if mine <= now then return 0 end
announce(ARGV[1], '1')
return 1
