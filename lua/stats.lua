-- stats.lua: count a queue's jobs by state, and say whether it is paused
-- (read only).
-- KEYS[1] due zset   KEYS[2] active zset   KEYS[3] dead zset
-- KEYS[4] paused string (queue_set.lua)   KEYS[5] due:high zset   KEYS[6] due:low zset
-- KEYS[7] completed zset (complete.lua)   KEYS[8] cancelled zset (cancel.lua)
-- KEYS[9] (optional) the kids zset of job keys (keys.lua): its jobs count
--   as ready or scheduled (not in ready_high or ready_low)
-- KEYS[10] (optional) the kcount zset of job keys: keys = the keys that
--   have waiting jobs
-- ARGV: none
-- returns: {ready, scheduled, active, dead, now_ms, paused, ready_high,
--   ready_low, completed, cancelled}; ready = due now, scheduled = due later, of every
--   priority level; ready_high and ready_low: those of ready at the high
--   and low levels; active does not count the set's pin (see record.lua);
--   paused: 1 = paused, 0 = running; completed: the finished jobs retained;
--   cancelled: the cancelled jobs kept; then keys (with KEYS[10], else 0)
-- bound: O(log N)

if not KEYS[8] then return redis.error_reply('ERR courier: stats needs the paused, due level, completed and cancelled keys') end
local now = now_ms()
local ready, due, by = 0, 0, {}
for i, k in ipairs({KEYS[1], KEYS[5], KEYS[6]}) do
  by[i] = redis.call('ZCOUNT', k, '-inf', now)
  ready = ready + by[i]
  due = due + redis.call('ZCARD', k)
end
if KEYS[9] then
  ready = ready + redis.call('ZCOUNT', KEYS[9], '-inf', now)
  due = due + redis.call('ZCARD', KEYS[9])
end
local active = redis.call('ZCOUNT', KEYS[2], '-inf', '(inf')
local keys = 0
if KEYS[10] then keys = redis.call('ZCARD', KEYS[10]) end
return {ready, due - ready, active, redis.call('ZCARD', KEYS[3]), now, redis.call('EXISTS', KEYS[4]), by[2], by[3],
  redis.call('ZCARD', KEYS[7]), redis.call('ZCARD', KEYS[8]), keys}
