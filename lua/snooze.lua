-- snooze.lua: put active jobs back to due at now+delay without spending an
-- attempt (a handler's Snooze, and jobs handed back at shutdown).
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] claims hash
-- ARGV[1] wake channel   ARGV[2] delay_ms   then pairs of id, claim
-- returns: number of jobs moved (stale pairs are skipped)
-- bound: <= 1000 pairs; O(n log N)

local delay = tonumber(ARGV[2])
if not delay or delay < 0 then return redis.error_reply('ERR courier: delay_ms must be >= 0') end
local ids, toks = pairs_from(3, 1000)
if type(ids) == 'table' and ids.err then return ids end
if #ids == 0 then return 0 end

local now = now_ms()
local prev = head_ms(KEYS[2])
local ok = held(KEYS[4], KEYS[3], ids, toks)
local moved = 0
for i, id in ipairs(ids) do
  local s = ok[i] and redis.call('HGET', KEYS[1], id)
  local h = s and rec_decode(s)
  if h then
    -- give the attempt back, never below zero spent
    if tonumber(toks[i]) - h.offset > 0 then h.offset = h.offset + 1 end
    redis.call('HSET', KEYS[1], id, rec_encode(h, s))
    redis.call('ZREM', KEYS[3], id)
    redis.call('ZADD', KEYS[2], now + delay, id)
    moved = moved + 1
  end
  -- a held job whose record does not decode stays active: recover kills it
end
if moved > 0 then wake(ARGV[1], prev, now + delay) end
return moved
