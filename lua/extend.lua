-- extend.lua: renew the leases of running jobs (the batched heartbeat).
-- KEYS[1] active zset   KEYS[2] claims hash   KEYS[3] dead zset   KEYS[4] state hash
-- ARGV[1] lease_ms   then pairs of id, claim
-- returns: flat triples id, claim, why of the jobs whose lease was NOT
--   extended (lost: recovered, finished elsewhere, cancelled, or gone); why
--   is 'cancelled' for a job that was cancelled while it ran (cancel.lua),
--   else ''
-- bound: <= 1000 pairs; O(n log N)

local lease = tonumber(ARGV[1])
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end
if not KEYS[4] then return redis.error_reply('ERR courier: extend needs the dead and state keys') end
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
    -- Rare: read why, so the worker ends the handler with the right cause.
    local why = ''
    if redis.call('ZSCORE', KEYS[3], id) then
      local _, _, err = st_decode(redis.call('HGET', KEYS[4], id) or '')
      if err == CANCELLED then why = CANCELLED end
    end
    lost[#lost + 1] = id
    lost[#lost + 1] = toks[i]
    lost[#lost + 1] = why
  end
end
if #renew > 0 then redis.call('ZADD', KEYS[1], 'XX', unpack(renew)) end
return lost
