-- requeue.lua: move dead or cancelled jobs back to due now, with a fresh set
-- of attempts.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] the set they leave: the dead
--   or the cancelled zset   KEYS[4] state hash
-- KEYS[5] due:high zset   KEYS[6] due:low zset   KEYS[7] opts hash
-- KEYS[8] unique hash   KEYS[9] unique:exp zset
-- KEYS[10..16] the seven keys of job keys (keys.lua's kset): a keyed job
--   waits among its key's (kput)
-- ARGV[1] wake channel   then ids
-- returns: array with one integer per id, 1 = requeued, 0 = not in that set
--   (a repeated id counts once)
-- A job goes to the due zset of its priority level. One with a unique key
-- holds it again when no other job holds it now; otherwise it runs without
-- holding it (it was released when the job died or was cancelled).
-- bound: <= 1000 ids; O(n log N), whatever the payloads' size: the attempts
--   are reset in the state entries, and a record is read only for a dead job
--   without one (the slow path of record.lua)

if not KEYS[16] then return redis.error_reply('ERR courier: requeue needs the due levels, opts and unique keys and those of job keys') end
if #ARGV - 1 > 1000 then return redis.error_reply('ERR courier: at most 1000 jobs per call') end
if #ARGV < 2 then return {} end
local ids = {}
for i = 2, #ARGV do ids[i - 1] = ARGV[i] end
local now = now_ms()
local d = dues(KEYS[5], KEYS[2], KEYS[6])
local prev = heads_ms(d)
local os = opts_of(KEYS[7], ids)
local now_s = ms_str(now)
local died = redis.call('ZMSCORE', KEYS[3], unpack(ids))
local st = {}
if redis.call('EXISTS', KEYS[4]) == 1 then st = redis.call('HMGET', KEYS[4], unpack(ids)) end
local out, seen, moved, due, states = {}, {}, {}, {h = {}, n = {}, l = {}}, {}
local kj = {} -- keyed jobs: {id, key, level, run-at}
for i, id in ipairs(ids) do
  out[i] = 0
  local fresh = false
  if died[i] and not seen[id] and redis.call('HEXISTS', KEYS[1], id) == 1 then
    -- the last error and the job's own max are kept
    local attempts, max, err = st_decode(st[i] or '')
    if attempts then
      fresh = st_encode(0, max, err)
    else
      local h = rec_decode(redis.call('HGET', KEYS[1], id))
      if h then fresh = st_encode(0, h.max, h.err) end
    end
  end
  if fresh then
    seen[id] = true
    moved[#moved + 1] = id
    states[#states + 1] = id
    states[#states + 1] = fresh
    local o = os and os[i]
    local jk = o and key_of(o)
    if jk then
      kj[#kj + 1] = {id, jk, level_of(o), now}
    else
      local z = due[level_of(o)]
      z[#z + 1] = now_s
      z[#z + 1] = id
    end
    out[i] = 1
    if o then
      local _, since, w, _, key = opt_decode(o)
      if key and key ~= '' then
        local f = 'k:' .. key
        local holder = uniq_holder(KEYS[1], redis.call('HGET', KEYS[8], f), now)
        if not holder or holder == id then
          local untl = 0
          if since == 'e' and w > 0 then untl = now + w end
          uniq_set(KEYS[8], KEYS[9], f, true, untl, id)
        end
      end
    end
  end
end
if #moved > 0 then
  redis.call('ZREM', KEYS[3], unpack(moved))
  redis.call('HSET', KEYS[4], unpack(states))
  zadd_levels(d, due)
  if #kj < #moved then wake(ARGV[1], prev, now) end
  wake(ARGV[1], nil, kput(kset(10), kj, now))
end
return out
