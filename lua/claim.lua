-- claim.lua: move up to n due jobs to active with a lease and a fresh claim token.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] claims hash
-- ARGV[1] n = max jobs to claim (the caller's free slots)   ARGV[2] lease_ms
-- returns: {now_us, next_ms, corrupt, id1, runat1_ms, claim1, rec1, id2, ...}
--   now_us: Redis clock in µs; next_ms: run-at of the earliest job still due
--   (-1 = none); corrupt: records that are not records and went to dead;
--   then per claimed job: its id, the run-at it was due at (a decimal
--   string), its claim token (the same for every job of one call) and its
--   record, unchanged (the running attempt is the record's attempts + 1).
-- bound: n <= 1000; O(n log N)

local n, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
if not n or n < 1 or n > 1000 then return redis.error_reply('ERR courier: claim 1 to 1000 jobs per call') end
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end

local now, now_us = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES', 'LIMIT', 0, n)
local out = {now_us, -1, 0}
if #due > 0 then
  local ids = {}
  for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
  local recs = redis.call('HMGET', KEYS[1], unpack(ids))
  local good, dead = {}, {}
  for i, id in ipairs(ids) do
    local s = recs[i]
    if s and rec_ok(s) then
      good[#good + 1] = i
    elseif s then
      redis.call('HSET', KEYS[1], id, rec_corrupt(s, now))
      dead[#dead + 1] = now
      dead[#dead + 1] = id
      out[3] = out[3] + 1
    end
    -- an id with no record is dropped from due: there is nothing to run
  end
  redis.call('ZREM', KEYS[2], unpack(ids))
  if #good > 0 then
    pin(KEYS[3], KEYS[5])
    local tok = redis.call('HINCRBY', KEYS[5], '', 1)
    local tok_s, deadline = ms_str(tok), ms_str(now + lease)
    local active, claims, o = {}, {}, #out
    for k, i in ipairs(good) do
      local id = ids[i]
      active[2 * k - 1] = deadline
      active[2 * k] = id
      claims[2 * k - 1] = id
      claims[2 * k] = tok_s
      out[o + 1] = id
      out[o + 2] = due[i * 2]
      out[o + 3] = tok
      out[o + 4] = recs[i]
      o = o + 4
    end
    redis.call('ZADD', KEYS[3], unpack(active))
    redis.call('HSET', KEYS[5], unpack(claims))
  end
  if #dead > 0 then redis.call('ZADD', KEYS[4], unpack(dead)) end
end
local nxt = head_ms(KEYS[2])
if nxt then out[2] = nxt end
return out
