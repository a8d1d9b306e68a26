-- recover.lua: return jobs whose lease expired (their worker died or hung) to
-- due now; the attempt stays spent, so a job that kills its worker every time
-- ends in dead instead of looping. A carrier duty: only the queue's leader
-- runs it (fenced).
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] claims hash   KEYS[6] leader hash (the queue's leader lock)
-- ARGV[1] wake channel   ARGV[2] limit   ARGV[3] default max attempts (for jobs without their own)
-- ARGV[4] leader field (<client-uuid>:<holder>)
-- returns: {recovered, dead}, or {-1, 0} when the caller no longer holds the
--          leader lock (nothing changed)
-- bound: limit <= 1000; O(limit log N)

local limit, defmax = tonumber(ARGV[2]), tonumber(ARGV[3])
if not limit or limit < 1 or limit > 1000 then return redis.error_reply('ERR courier: limit must be 1 to 1000') end
if not defmax or defmax < 1 then return redis.error_reply('ERR courier: default max attempts must be >= 1') end
if not fenced(KEYS[6], ARGV[4]) then return {-1, 0} end

local now = now_ms()
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. now, 'LIMIT', 0, limit)
if #ids == 0 then return {0, 0} end
local prev = head_ms(KEYS[2])
redis.call('ZREM', KEYS[3], unpack(ids))
redis.call('HDEL', KEYS[5], unpack(ids))
local back, dead = 0, 0
for _, id in ipairs(ids) do
  local s = redis.call('HGET', KEYS[1], id)
  if s then
    local h = rec_decode(s)
    if h == nil then
      redis.call('HSET', KEYS[1], id, rec_corrupt(s, now))
      redis.call('ZADD', KEYS[4], now, id)
      dead = dead + 1
    else
      h.attempts = h.attempts + 1
      local max = defmax
      if h.max > 0 then max = h.max end
      h.err = 'lease expired: the worker running attempt ' .. h.attempts .. ' stopped responding'
      if h.attempts >= max then
        h.err = h.err .. '; no attempts left'
        redis.call('ZADD', KEYS[4], now, id)
        dead = dead + 1
      else
        redis.call('ZADD', KEYS[2], now, id)
        back = back + 1
      end
      redis.call('HSET', KEYS[1], id, rec_encode(h, s))
    end
  end
end
if back > 0 then wake(ARGV[1], prev, now) end
return {back, dead}
