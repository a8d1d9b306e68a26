-- key_conf.lua: set a job key's own cap and weight in one partition
-- (admin.Client.SetKeyLimits writes every partition of the queue). A key
-- parked at its old cap is placed again at once, so a higher cap takes
-- effect without waiting for a slot to free.
-- KEYS[1] to KEYS[7] the seven keys of job keys (keys.lua's kset)
-- ARGV[1] the queue's wake channel   ARGV[2] key (1 to 256 bytes)
-- ARGV[3] cap: '' = the queue's default (KeyConcurrency), '0' = none,
--   else 1 to 1000000   ARGV[4] weight: '' = 1 (the default), else 1 to 1000
-- ARGV[5] rate limit "<n>;<ms>" (rate.lua's bounds), '0;0' = none, '' or
--   absent = the queue's default (KeyRateLimit)
-- returns: 1
-- bound: O(log N): one key's fields, and its head job when it was parked

local key, cap, weight = ARGV[2], ARGV[3], ARGV[4]
if not KEYS[7] then return redis.error_reply('ERR courier: key_conf needs the seven keys of job keys') end
if not key or #key < 1 or #key > 256 then return redis.error_reply('ERR courier: the key must be 1 to 256 bytes') end
if cap ~= '' and (not string.match(cap, '^%d+$') or #cap > 7 or tonumber(cap) > 1000000) then
  return redis.error_reply('ERR courier: cap must be empty or 0 to 1000000')
end
if weight ~= '' and (not string.match(weight, '^%d+$') or #weight > 4 or tonumber(weight) < 1 or tonumber(weight) > 1000) then
  return redis.error_reply('ERR courier: weight must be empty or 1 to 1000')
end
local rate = ARGV[5] or ''
if rate ~= '' and rate ~= '0;0' then
  local a, b = string.match(rate, '^(%d+);(%d+)$')
  local rn, err = rate_args(a, b)
  if not a or not rn or rn == 0 then return redis.error_reply('ERR courier: rate must be "<n>;<ms>": ' .. (err or 'n and ms')) end
end
local ks = kset(1)
field_set(ks.conf, 'r:' .. key, rate, '')
field_set(ks.conf, 'c:' .. key, cap, '')
field_set(ks.conf, 'w:' .. key, weight, '')
if redis.call('HDEL', ks.state, 'p:' .. key) == 1 then
  local now = now_ms()
  local at = khead(ks, key, redis.call('HGET', ks.state, 'lv') == '1')
  if at then wake(ARGV[1], nil, kplace(ks, key, at, now)) end
end
return 1
