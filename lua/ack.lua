-- ack.lua: delete finished jobs; a stale claim is ignored.
-- KEYS[1] jobs hash   KEYS[2] active zset
-- ARGV: pairs of id, claim (the claim token the worker got)
-- returns: number of jobs deleted (pairs whose job is not active under that claim are skipped)
-- bound: <= 1000 pairs; O(n log N)

local n = tokens(1, 1000)
if type(n) == 'table' then return n end
if n == 0 then return 0 end
local ids = {}
for i = 1, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local recs = redis.call('HMGET', KEYS[1], unpack(ids))
local done = {}
for i, id in ipairs(ids) do
  local s = recs[i]
  if s and rec_claim(s) == tonumber(ARGV[i * 2]) and redis.call('ZSCORE', KEYS[2], id) then
    done[#done + 1] = id
  end
end
if #done > 0 then
  redis.call('HDEL', KEYS[1], unpack(done))
  redis.call('ZREM', KEYS[2], unpack(done))
end
return #done
