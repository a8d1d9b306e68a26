-- extend.lua: renew the leases of running jobs (the batched heartbeat).
-- KEYS[1] jobs hash   KEYS[2] active zset
-- ARGV[1] lease_ms   then pairs of id, claim
-- returns: the ids whose lease was NOT extended (lost: recovered, claimed again or gone)
-- bound: <= 1000 pairs; O(n log N)

local lease = tonumber(ARGV[1])
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end
local n = tokens(2, 1000)
if type(n) == 'table' then return n end
if n == 0 then return {} end

local deadline = now_ms() + lease
local ids = {}
for i = 2, #ARGV, 2 do ids[#ids + 1] = ARGV[i] end
local recs = redis.call('HMGET', KEYS[1], unpack(ids))
local lost = {}
for i, id in ipairs(ids) do
  local s = recs[i]
  if s and rec_claim(s) == tonumber(ARGV[i * 2 + 1]) and redis.call('ZSCORE', KEYS[2], id) then
    redis.call('ZADD', KEYS[2], 'XX', deadline, id)
  else
    lost[#lost + 1] = id
  end
end
return lost
