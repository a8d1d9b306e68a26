-- snooze.lua: put active jobs back to due at now+delay without spending an
-- attempt (a handler's Snooze, and jobs handed back at shutdown).
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset
-- ARGV[1] wake channel   ARGV[2] delay_ms   then pairs of id, claim
-- returns: number of jobs moved (stale pairs are skipped)
-- bound: <= 1000 pairs; O(n log N)

local delay = tonumber(ARGV[2])
if not delay or delay < 0 then return redis.error_reply('ERR courier: delay_ms must be >= 0') end
local n = tokens(3, 1000)
if type(n) == 'table' then return n end

local now = now_ms()
local prev = head_ms(KEYS[2])
local moved = 0
for i = 3, #ARGV, 2 do
  local id = ARGV[i]
  local s = redis.call('HGET', KEYS[1], id)
  if s and redis.call('ZSCORE', KEYS[3], id) then
    local h = rec_decode(s)
    if h and h.claim == tonumber(ARGV[i + 1]) then
      if h.attempt > 0 then h.attempt = h.attempt - 1 end
      redis.call('HSET', KEYS[1], id, rec_encode(h, s))
      redis.call('ZREM', KEYS[3], id)
      redis.call('ZADD', KEYS[2], now + delay, id)
      moved = moved + 1
    end
  end
end
if moved > 0 then wake(ARGV[1], prev, now + delay) end
return moved
