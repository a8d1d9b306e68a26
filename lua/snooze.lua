-- snooze.lua: put active jobs back to due at now+delay without spending their
-- attempt (a handler's Snooze, and jobs handed back at shutdown).
-- KEYS[1] due zset   KEYS[2] active zset   KEYS[3] claims hash
-- KEYS[4] due:high zset   KEYS[5] due:low zset   KEYS[6] opts hash (each job
--   goes back to the due zset of its priority level)
-- ARGV[1] wake channel   ARGV[2] delay_ms   then pairs of id, claim
-- returns: number of jobs moved (stale pairs are skipped; a repeated id counts once)
-- bound: <= 1000 pairs; O(n log N)

if not KEYS[6] then return redis.error_reply('ERR courier: snooze needs the due levels and opts keys') end
local delay = tonumber(ARGV[2])
if not delay or delay < 0 then return redis.error_reply('ERR courier: delay_ms must be >= 0') end
local ids, toks = pairs_from(3, 1000)
if type(ids) == 'table' and ids.err then return ids end
if #ids == 0 then return 0 end

local now = now_ms()
local ok = held(KEYS[3], ids, toks)
local at = ms_str(now + delay)
local moved = {}
for i, id in ipairs(ids) do
  if ok[i] then moved[#moved + 1] = id end
end
if #moved == 0 then return 0 end
local d = dues(KEYS[4], KEYS[1], KEYS[5])
local os = opts_of(KEYS[6], moved)
local due = {h = {}, n = {}, l = {}}
for i, id in ipairs(moved) do
  local z = due[level_of(os and os[i])]
  z[#z + 1] = at
  z[#z + 1] = id
end
local prev = heads_ms(d)
redis.call('HDEL', KEYS[3], unpack(moved))
local n = redis.call('ZREM', KEYS[2], unpack(moved))
zadd_levels(d, due)
wake(ARGV[1], prev, now + delay)
return n
