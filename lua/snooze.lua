-- snooze.lua: put active jobs back to due at now+delay without spending their
-- attempt (a handler's Snooze, and jobs handed back at shutdown).
-- KEYS[1] due zset   KEYS[2] active zset   KEYS[3] claims hash
-- ARGV[1] wake channel   ARGV[2] delay_ms   then pairs of id, claim
-- returns: number of jobs moved (stale pairs are skipped; a repeated id counts once)
-- bound: <= 1000 pairs; O(n log N)

local delay = tonumber(ARGV[2])
if not delay or delay < 0 then return redis.error_reply('ERR courier: delay_ms must be >= 0') end
local ids, toks = pairs_from(3, 1000)
if type(ids) == 'table' and ids.err then return ids end
if #ids == 0 then return 0 end

local now = now_ms()
local ok = held(KEYS[3], ids, toks)
local at = ms_str(now + delay)
local moved, due = {}, {}
for i, id in ipairs(ids) do
  if ok[i] then
    moved[#moved + 1] = id
    due[#due + 1] = at
    due[#due + 1] = id
  end
end
if #moved == 0 then return 0 end
local prev = head_ms(KEYS[1])
redis.call('HDEL', KEYS[3], unpack(moved))
local n = redis.call('ZREM', KEYS[2], unpack(moved))
redis.call('ZADD', KEYS[1], unpack(due))
wake(ARGV[1], prev, now + delay)
return n
