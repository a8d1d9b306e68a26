-- ack.lua: delete finished jobs; a stale claim is ignored.
-- KEYS[1] jobs hash   KEYS[2] active zset   KEYS[3] claims hash   KEYS[4] state hash
-- ARGV: pairs of id, claim (the claim token the worker got)
-- returns: number of jobs deleted (pairs whose job is not active under that
--   claim are skipped; a repeated id counts once)
-- bound: <= 1000 pairs; O(n log N)

local ids, toks = pairs_from(1, 1000)
if type(ids) == 'table' and ids.err then return ids end
if #ids == 0 then return 0 end
local ok = held(KEYS[3], ids, toks)
local done, k = {}, 0
for i = 1, #ids do
  if ok[i] then
    k = k + 1
    done[k] = ids[i]
  end
end
if k == 0 then return 0 end
redis.call('HDEL', KEYS[1], unpack(done))
redis.call('HDEL', KEYS[3], unpack(done))
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('HDEL', KEYS[4], unpack(done)) end
return redis.call('ZREM', KEYS[2], unpack(done))
