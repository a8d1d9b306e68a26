-- stats.lua: count a queue's jobs by state (read only).
-- KEYS[1] due zset   KEYS[2] active zset   KEYS[3] dead zset
-- ARGV: none
-- returns: {ready, scheduled, active, dead, now_ms}; ready = due now, scheduled = due later;
--   active does not count the set's pin (see record.lua)
-- bound: O(log N)

local now = now_ms()
local ready = redis.call('ZCOUNT', KEYS[1], '-inf', now)
local due = redis.call('ZCARD', KEYS[1])
local active = redis.call('ZCOUNT', KEYS[2], '-inf', '(inf')
return {ready, due - ready, active, redis.call('ZCARD', KEYS[3]), now}
