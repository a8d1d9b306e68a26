-- extend.lua: renew the leases of running jobs (the batched heartbeat).
-- KEYS[1] active zset   KEYS[2] claims hash
-- ARGV[1] lease_ms   then pairs of id, claim
-- returns: flat pairs id, claim of the jobs whose lease was NOT extended (lost:
--   recovered, finished elsewhere, or gone)
-- bound: <= 1000 pairs; O(n log N)

local lease = tonumber(ARGV[1])
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end
local ids, toks = pairs_from(2, 1000)
if type(ids) == 'table' and ids.err then return ids end
if #ids == 0 then return {} end

local deadline = ms_str(now_ms() + lease)
local ok = held(KEYS[2], ids, toks)
local renew, lost = {}, {}
for i, id in ipairs(ids) do
  if ok[i] then
    renew[#renew + 1] = deadline
    renew[#renew + 1] = id
  else
    lost[#lost + 1] = id
    lost[#lost + 1] = toks[i]
  end
end
if #renew > 0 then redis.call('ZADD', KEYS[1], 'XX', unpack(renew)) end
return lost
