-- claim.lua: move up to n due jobs to active with a lease, spending an attempt each.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- ARGV[1] n = max jobs to claim (the caller's free slots)   ARGV[2] lease_ms
-- returns: {now_us, next_ms, corrupt, id1, runat1_ms, rec1, id2, runat2_ms, rec2, ...}
--   now_us: Redis clock in µs; next_ms: run-at of the earliest job still due
--   (-1 = none); corrupt: records that did not decode and went to dead;
--   then the claimed jobs with the run-at they were due at and their updated records.
-- bound: n <= 1000; O(n log N)

local n, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
if not n or n < 1 or n > 1000 then return redis.error_reply('ERR courier: claim 1 to 1000 jobs per call') end
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end

local now, now_us = now_ms()
local due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES', 'LIMIT', 0, n)
local ids, runat = {}, {}
for i = 1, #due, 2 do ids[#ids + 1] = due[i]; runat[#runat + 1] = due[i + 1] end
local out = {now_us, -1, 0}
if #ids > 0 then
  local deadline = now + lease
  local recs = redis.call('HMGET', KEYS[1], unpack(ids))
  local hset, active, dead = {}, {}, {}
  for i, id in ipairs(ids) do
    local s = recs[i]
    if s then
      local h = rec_decode(s)
      if h then
        h.claim = h.claim + 1
        h.attempt = h.attempt + 1
        local r = rec_encode(h, s)
        hset[#hset + 1] = id; hset[#hset + 1] = r
        active[#active + 1] = deadline; active[#active + 1] = id
        out[#out + 1] = id; out[#out + 1] = tonumber(runat[i]); out[#out + 1] = r
      else
        -- keep the bytes as the payload of a valid record so nothing is lost
        local err = 'decode: corrupt job record'
        local r = 'c1;0;0;0;0;' .. string.format('%d', now) .. ';' .. #err .. ';' .. err .. s
        hset[#hset + 1] = id; hset[#hset + 1] = r
        dead[#dead + 1] = now; dead[#dead + 1] = id
        out[3] = out[3] + 1
      end
    end
    -- an id with no record is dropped from due: there is nothing to run
  end
  redis.call('ZREM', KEYS[2], unpack(ids))
  if #hset > 0 then redis.call('HSET', KEYS[1], unpack(hset)) end
  if #active > 0 then redis.call('ZADD', KEYS[3], unpack(active)) end
  if #dead > 0 then redis.call('ZADD', KEYS[4], unpack(dead)) end
end
local nxt = head_ms(KEYS[2])
if nxt then out[2] = nxt end
return out
