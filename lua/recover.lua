-- recover.lua: return jobs whose lease expired (their worker died or hung) to
-- due now; the attempt stays spent, so a job that kills its worker every time
-- ends in dead instead of looping.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- ARGV[1] wake channel   ARGV[2] limit   ARGV[3] default max attempts (for records with max 0)
-- returns: {recovered, dead}
-- bound: limit <= 1000; O(limit log N)

local limit, defmax = tonumber(ARGV[2]), tonumber(ARGV[3])
if not limit or limit < 1 or limit > 1000 then return redis.error_reply('ERR courier: limit must be 1 to 1000') end
if not defmax or defmax < 1 then return redis.error_reply('ERR courier: default max attempts must be >= 1') end

local now = now_ms()
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. now, 'LIMIT', 0, limit)
local prev = head_ms(KEYS[2])
local back, dead = 0, 0
for _, id in ipairs(ids) do
  local s = redis.call('HGET', KEYS[1], id)
  redis.call('ZREM', KEYS[3], id)
  if s then
    local h = rec_decode(s)
    local max = defmax
    if h and h.max > 0 then max = h.max end
    if h == nil then
      local err = 'decode: corrupt job record'
      redis.call('HSET', KEYS[1], id, 'c1;0;0;0;0;' .. string.format('%d', now) .. ';' .. #err .. ';' .. err .. s)
      redis.call('ZADD', KEYS[4], now, id)
      dead = dead + 1
    elseif h.attempt >= max then
      h.err = 'lease expired: the worker running attempt ' .. h.attempt .. ' stopped responding; no attempts left'
      redis.call('HSET', KEYS[1], id, rec_encode(h, s))
      redis.call('ZADD', KEYS[4], now, id)
      dead = dead + 1
    else
      h.err = 'lease expired: the worker running attempt ' .. h.attempt .. ' stopped responding'
      redis.call('HSET', KEYS[1], id, rec_encode(h, s))
      redis.call('ZADD', KEYS[2], now, id)
      back = back + 1
    end
  end
end
if back > 0 then wake(ARGV[1], prev, now) end
return {back, dead}
