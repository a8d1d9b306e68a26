-- cancel.lua: delete a job that has not started.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] state hash
-- ARGV[1] id
-- returns: 1 = cancelled (deleted), 0 = no such job, -1 = running (untouched),
--   -2 = dead (untouched: requeue or purge it instead)
-- bound: one job; O(log N)

local id = ARGV[1]
if redis.call('ZREM', KEYS[2], id) == 1 then
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[5], id)
  return 1
end
if redis.call('ZSCORE', KEYS[3], id) then return -1 end
if redis.call('ZSCORE', KEYS[4], id) then return -2 end
return 0
