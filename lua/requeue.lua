-- requeue.lua: move dead jobs back to due now, with a fresh set of attempts.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] dead zset   KEYS[4] state hash
-- ARGV[1] wake channel   then ids
-- returns: array with one integer per id, 1 = requeued, 0 = not in the dead set
--   (a repeated id counts once)
-- bound: <= 1000 ids; O(n log N), whatever the payloads' size: the attempts
--   are reset in the state entries, and a record is read only for a dead job
--   without one (the slow path of record.lua)

if #ARGV - 1 > 1000 then return redis.error_reply('ERR courier: at most 1000 jobs per call') end
if #ARGV < 2 then return {} end
local ids = {}
for i = 2, #ARGV do ids[i - 1] = ARGV[i] end
local now = now_ms()
local prev = head_ms(KEYS[2])
local now_s = ms_str(now)
local died = redis.call('ZMSCORE', KEYS[3], unpack(ids))
local st = {}
if redis.call('EXISTS', KEYS[4]) == 1 then st = redis.call('HMGET', KEYS[4], unpack(ids)) end
local out, seen, moved, due, states = {}, {}, {}, {}, {}
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
    due[#due + 1] = now_s
    due[#due + 1] = id
    out[i] = 1
  end
end
if #moved > 0 then
  redis.call('ZREM', KEYS[3], unpack(moved))
  redis.call('HSET', KEYS[4], unpack(states))
  redis.call('ZADD', KEYS[2], unpack(due))
  wake(ARGV[1], prev, now)
end
return out
