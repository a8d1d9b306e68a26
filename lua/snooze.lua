-- snooze.lua: put active jobs back to due at now+delay without spending their
-- attempt (a handler's Snooze, and jobs handed back at shutdown).
-- KEYS[1] due zset   KEYS[2] active zset   KEYS[3] claims hash
-- KEYS[4] due:high zset   KEYS[5] due:low zset   KEYS[6] opts hash (each job
--   goes back to the due zset of its priority level)
-- KEYS[7..13] the seven keys of job keys (keys.lua's kset): a keyed job's
--   slot is released (kfree) and it waits among its key's again (kput)
-- ARGV[1] wake channel   ARGV[2] delay_ms   then pairs of id, claim
-- returns: number of jobs moved (stale pairs are skipped; a repeated id counts once)
-- bound: <= 1000 pairs; O(n log N)

if not KEYS[13] then return redis.error_reply('ERR courier: snooze needs the due levels, opts keys and those of job keys') end
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
local kj = {} -- keyed jobs: {id, key, level, run-at}
for i, id in ipairs(moved) do
  local o = os and os[i]
  local key = o and key_of(o)
  if key then
    kj[#kj + 1] = {id, key, level_of(o), now + delay}
  else
    local z = due[level_of(o)]
    z[#z + 1] = at
    z[#z + 1] = id
  end
end
local prev = heads_ms(d)
redis.call('HDEL', KEYS[3], unpack(moved))
local n = redis.call('ZREM', KEYS[2], unpack(moved))
zadd_levels(d, due)
if #kj < #moved then wake(ARGV[1], prev, now + delay) end
if #kj > 0 then
  local ks = kset(7)
  wake(ARGV[1], nil, kfree_of(ks, os, now))
  wake(ARGV[1], nil, kput(ks, kj, now))
end
return n
