-- history_trim.lua: (carrier, fenced) delete the oldest minutes of a queue's
-- per-minute history (record.lua's history_add): those before the
-- retention, oldest first, up to 60 per call.
-- KEYS[1] history hash   KEYS[2] history:minutes zset (member = score = the
--   minute, floor(ms / 60000))   KEYS[3] leader hash (the queue's leader lock)
-- ARGV[1] leader field (<client-uuid>:<holder>)   ARGV[2] retention, in
--   minutes (1 to 10^8): the minutes below now's minute - retention go
-- returns: the number of minutes deleted (60 = there may be more), or -1
--   when the caller no longer holds the leader lock (nothing changed)
-- bound: 60 minutes of 15 fields each per call; O(log N + 900)

local keep = ARGV[2] or ''
if not string.match(keep, '^%d+$') or #keep > 9 or tonumber(keep) < 1 or tonumber(keep) > 100000000 then
  return redis.error_reply('ERR courier: retention must be 1 to 100000000 minutes')
end
if not KEYS[3] then return redis.error_reply('ERR courier: history_trim needs the history, index and leader keys') end
if not fenced(KEYS[3], ARGV[1]) then return -1 end

local cutoff = math.floor(now_ms() / 60000) - tonumber(keep)
local minutes = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', '(' .. string.format('%d', cutoff), 'LIMIT', 0, 60)
if #minutes == 0 then return 0 end
local kinds = {'s', 'r', 'd'}
for b = 0, LAG_BUCKETS - 1 do kinds[#kinds + 1] = 'l' .. b end
local fields = {}
for _, m in ipairs(minutes) do
  for _, k in ipairs(kinds) do fields[#fields + 1] = m .. ':' .. k end
end
redis.call('HDEL', KEYS[1], unpack(fields))
redis.call('ZREM', KEYS[2], unpack(minutes))
return #minutes
