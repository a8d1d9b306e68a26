-- stats.lua: count a queue's jobs by state, and say whether it is paused
-- (read only).
-- KEYS[1] due zset   KEYS[2] active zset   KEYS[3] dead zset
-- KEYS[4] paused string (pause.lua)
-- ARGV: none
-- returns: {ready, scheduled, active, dead, now_ms, paused}; ready = due now,
--   scheduled = due later; active does not count the set's pin (see
--   record.lua); paused: 1 = paused, 0 = running
-- bound: O(log N)

if not KEYS[4] then return redis.error_reply('ERR courier: stats needs the paused key (KEYS[4])') end
local now = now_ms()
local ready = redis.call('ZCOUNT', KEYS[1], '-inf', now)
local due = redis.call('ZCARD', KEYS[1])
local active = redis.call('ZCOUNT', KEYS[2], '-inf', '(inf')
return {ready, due - ready, active, redis.call('ZCARD', KEYS[3]), now, redis.call('EXISTS', KEYS[4])}
