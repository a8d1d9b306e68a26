-- purge.lua: delete dead or cancelled jobs for good.
-- KEYS[1] jobs hash   KEYS[2] the set purged: the dead or the cancelled zset
--   KEYS[3] state hash   KEYS[4] opts hash
-- ARGV[1] until_ms: delete only jobs that entered the set at or before it
--   ('' = no bound)
-- then ids
-- returns: array with one integer per id, 1 = deleted, 0 = not in the set
--   or entered it after until_ms (a due or active job is never touched; a repeated
--   id counts once)
-- bound: <= 1000 ids; O(n log N)
-- A record exists exactly while its job is in one of due, active, dead,
-- completed and cancelled: taking the job out of the set and deleting its
-- record (and state entry) together keeps that so. A job of another set is
-- never touched.
-- until_ms lets a purge of everything that was dead when it started spare a
-- job that was requeued and died again in the meantime.

if not KEYS[4] then return redis.error_reply('ERR courier: purge needs the opts key') end
if #ARGV < 1 then return redis.error_reply('ERR courier: until_ms expected') end
if #ARGV - 1 > 1000 then return redis.error_reply('ERR courier: at most 1000 jobs per call') end
local until_ms = tonumber(ARGV[1])
if ARGV[1] ~= '' and (not string.match(ARGV[1], '^%d+$') or #ARGV[1] > 15) then
  return redis.error_reply('ERR courier: until_ms must be whole ms (at most 15 digits) or empty')
end
local out = {}
for i = 2, #ARGV do
  local id = ARGV[i]
  out[i - 1] = 0
  local score = redis.call('ZSCORE', KEYS[2], id)
  if score and (not until_ms or tonumber(score) <= until_ms) then
    redis.call('ZREM', KEYS[2], id)
    redis.call('HDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[3], id)
    redis.call('HDEL', KEYS[4], id)
    out[i - 1] = 1
  end
end
return out
