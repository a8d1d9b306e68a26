-- snooze.lua: put active jobs back to due at now+delay without spending their
-- attempt (a handler's Snooze, and jobs handed back at shutdown).
-- KEYS[1] due zset   KEYS[2] active zset   KEYS[3] claims hash
-- KEYS[4] due:high zset   KEYS[5] due:low zset   KEYS[6] opts hash (each job
--   goes back to the due zset of its priority level)
-- KEYS[7..13] the seven keys of job keys (keys.lua's kset): a keyed job's
--   slot is released (kfree) and it waits among its key's again (kput)
-- ARGV[1] wake channel   ARGV[2] delay_ms, or "<delay_ms>;k": the keys of
--   the keyed jobs moved are limited until now + delay_ms as well (a
--   downstream said "slow down": kstate's "u:"..key, the later of the two
--   when one is set; at most 86400000 ms), so none of their jobs starts
--   before then (keys.lua); unkeyed jobs are snoozed alike
-- then pairs of id, claim
-- returns: number of jobs moved (stale pairs are skipped; a repeated id counts once)
-- bound: <= 1000 pairs; O(n log N)

if not KEYS[13] then return redis.error_reply('ERR courier: snooze needs the due levels, opts keys and those of job keys') end
local delay_s, limit = string.match(ARGV[2] or '', '^(%d+)(;?k?)$')
local delay = tonumber(delay_s or '')
if not delay or #delay_s > 12 or (limit ~= '' and limit ~= ';k') then
  return redis.error_reply('ERR courier: delay_ms must be whole ms >= 0, or "<ms>;k"')
end
limit = limit == ';k'
if limit and delay > 86400000 then return redis.error_reply('ERR courier: a key is limited for at most 86400000 ms') end
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
  if limit then
    local u = {}
    for _, j in ipairs(kj) do u[j[2]] = true end
    for key in pairs(u) do
      local was = tonumber(redis.call('HGET', ks.state, 'u:' .. key) or '')
      if not was or was < now + delay then redis.call('HSET', ks.state, 'u:' .. key, at) end
    end
  end
  wake(ARGV[1], nil, kfree_of(ks, os, now))
  wake(ARGV[1], nil, kput(ks, kj, now))
end
return n
