-- fire.lua (carrier, fenced): enqueue one fire of a periodic job, once.
-- The job's id is periodic:<schedule>:<fire ms>, and the schedule's last fire
-- time is kept in the periodic hash, so a fire is enqueued at most once even
-- when a new leader catches up on fires an old one may have made.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] periodic hash (schedule -> last fire ms)
-- KEYS[4] leader hash (the queue's leader lock)
-- ARGV[1] leader field   ARGV[2] wake channel   ARGV[3] schedule name
-- ARGV[4] fire time, ms   ARGV[5] max attempts (0 = the queue's)
-- ARGV[6] timeout ms (0 = the queue's)   ARGV[7] payload
-- returns: {1, now} enqueued; {0, now} this fire (or a later one) was made
--          already; {-2, now} the fire time is still ahead on the Redis clock
--          (nothing changed: call again then); {-1, 0} the caller no longer
--          holds the leader lock (nothing changed)
-- bound: O(log N)

local fire, maxatt, timeout = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
if ARGV[3] == '' then return redis.error_reply('ERR courier: empty schedule name') end
if not fire or fire < 0 or fire ~= math.floor(fire) then return redis.error_reply('ERR courier: bad fire time') end
if not maxatt or maxatt < 0 or maxatt ~= math.floor(maxatt) then return redis.error_reply('ERR courier: bad max attempts') end
if not timeout or timeout < 0 or timeout ~= math.floor(timeout) then return redis.error_reply('ERR courier: bad timeout') end
if not fenced(KEYS[4], ARGV[1]) then return {-1, 0} end

local now = now_ms()
if fire > now then return {-2, now} end
local last = tonumber(redis.call('HGET', KEYS[3], ARGV[3]))
if last and last >= fire then return {0, now} end
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
local id = 'periodic:' .. ARGV[3] .. ':' .. ARGV[4]
if redis.call('HEXISTS', KEYS[1], id) == 1 then return {0, now} end
local prev = head_ms(KEYS[2])
redis.call('HSET', KEYS[1], id, 'c3;0;' .. ARGV[5] .. ';' .. ARGV[6] .. ';' .. ms_str(now) .. ';0;' .. ARGV[7])
redis.call('ZADD', KEYS[2], ARGV[4], id)
wake(ARGV[2], prev, fire)
return {1, now}
