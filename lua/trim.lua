-- trim.lua: (carrier, fenced) delete the jobs of a queue's dead set, of its
-- completed set (complete.lua) or of its cancelled set (cancel.lua), that entered it longer ago than the age
-- limit, then the oldest beyond the count limit.
-- KEYS[1] jobs hash   KEYS[2] the set trimmed: dead, completed or cancelled zset
--   (id → time it entered, ms)   KEYS[3] leader hash (the queue's leader lock)
-- KEYS[4] state hash   KEYS[5] opts hash   KEYS[6] results hash: a deleted
--   job's entries in these go with its record (a dead job has no result, a
--   completed one no options: the deletes of what is absent cost nothing)
-- ARGV[1] leader field (<client-uuid>:<holder>)   ARGV[2] max jobs kept (>= 0)
-- ARGV[3] max age, ms (>= 1; 0 = no age limit)   ARGV[4] limit: jobs deleted
--   per call (1..1000)
-- returns: {deleted by age, deleted by count}, or {-1, 0} when the caller no
--          longer holds the leader lock (nothing changed)
-- bound: limit <= 1000; O(limit log N)

local maxjobs, maxage, limit = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
if not maxjobs or maxjobs < 0 then return redis.error_reply('ERR courier: max jobs must be >= 0') end
if not maxage or maxage < 0 then return redis.error_reply('ERR courier: max age must be >= 1 ms, or 0 for none') end
if not limit or limit < 1 or limit > 1000 then return redis.error_reply('ERR courier: limit must be 1 to 1000') end
if not KEYS[6] then return redis.error_reply('ERR courier: trim needs the opts and results keys') end
if not fenced(KEYS[3], ARGV[1]) then return {-1, 0} end

local function delete(ids)
  if #ids > 0 then
    redis.call('ZREM', KEYS[2], unpack(ids))
    redis.call('HDEL', KEYS[1], unpack(ids))
    redis.call('HDEL', KEYS[4], unpack(ids))
    redis.call('HDEL', KEYS[5], unpack(ids))
    redis.call('HDEL', KEYS[6], unpack(ids))
  end
  return #ids
end

local old = 0
if maxage > 0 then
  local now = now_ms()
  old = delete(redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. ms_str(now - maxage), 'LIMIT', 0, limit))
end
local over = 0
local excess = redis.call('ZCARD', KEYS[2]) - maxjobs
if excess > 0 and old < limit then
  over = delete(redis.call('ZRANGE', KEYS[2], 0, math.min(excess, limit - old) - 1))
end
return {old, over}
