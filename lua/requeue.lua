-- requeue.lua: move dead jobs back to due now, with a fresh set of attempts.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] dead zset
-- ARGV[1] wake channel   then ids
-- returns: array with one integer per id, 1 = requeued, 0 = not in the dead set
-- bound: <= 1000 ids; O(n log N)

if #ARGV - 1 > 1000 then return redis.error_reply('ERR courier: at most 1000 jobs per call') end
local now = now_ms()
local prev = head_ms(KEYS[2])
local out, moved = {}, 0
for i = 2, #ARGV do
  local id = ARGV[i]
  out[i - 1] = 0
  local s = redis.call('ZSCORE', KEYS[3], id) and redis.call('HGET', KEYS[1], id)
  local h = s and rec_decode(s)
  if h then
    h.attempts = 0 -- the last error is kept for the record
    redis.call('HSET', KEYS[1], id, rec_encode(h, s))
    redis.call('ZREM', KEYS[3], id)
    redis.call('ZADD', KEYS[2], now, id)
    out[i - 1] = 1
    moved = moved + 1
  end
end
if moved > 0 then wake(ARGV[1], prev, now) end
return out
