-- retry.lua: end a failed attempt: back to due after a delay, or to dead.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- ARGV[1] wake channel   ARGV[2] id   ARGV[3] claim   ARGV[4] to = 'due' | 'dead'
-- ARGV[5] delay_ms (for 'due')   ARGV[6] error text (stored as the last error)
-- returns: 1 = moved, 0 = stale (the job is not active under that claim)
-- bound: one job; O(log N)

local claim, delay, to = tonumber(ARGV[3]), tonumber(ARGV[5]), ARGV[4]
if not claim then return redis.error_reply('ERR courier: claim must be a number') end
if to ~= 'due' and to ~= 'dead' then return redis.error_reply("ERR courier: to must be 'due' or 'dead'") end
if to == 'due' and (not delay or delay < 0) then return redis.error_reply('ERR courier: delay_ms must be >= 0') end

local s = redis.call('HGET', KEYS[1], ARGV[2])
if not s or not redis.call('ZSCORE', KEYS[3], ARGV[2]) then return 0 end
local h = rec_decode(s)
if not h or h.claim ~= claim then return 0 end

local now = now_ms()
h.err = ARGV[6]
redis.call('HSET', KEYS[1], ARGV[2], rec_encode(h, s))
redis.call('ZREM', KEYS[3], ARGV[2])
if to == 'dead' then
  redis.call('ZADD', KEYS[4], now, ARGV[2])
else
  local prev = head_ms(KEYS[2])
  redis.call('ZADD', KEYS[2], now + delay, ARGV[2])
  wake(ARGV[1], prev, now + delay)
end
return 1
