-- fire.lua: (carrier, fenced) enqueue one fire of a periodic job, once.
-- The job's id is periodic:<schedule>:<fire ms>, and the schedule's last fire
-- time is kept in the periodic hash, so a fire is enqueued at most once even
-- when a new leader catches up on fires an old one may have made.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] periodic hash (schedule -> last fire ms)
-- KEYS[4] leader hash (the queue's leader lock)   KEYS[5] state hash
-- ARGV[1] leader field   ARGV[2] wake channel   ARGV[3] schedule name
-- ARGV[4] fire time, ms   ARGV[5] max attempts (0 = the queue's)
-- ARGV[6] timeout ms (0 = the queue's)   ARGV[7] payload
-- ARGV[8] (optional) the job's headers section, "name=value\n" per header
--   (store/headers.go; 2 to 16384 bytes ending in a newline), as enqueue.lua
--   takes it: the job's kind travels there; absent or '' for none, and the
--   record is then the c3 one older versions wrote
-- returns: {1, now} enqueued; {0, now} this fire (or a later one) was made
--          already; {-2, now} the fire time is still ahead on the Redis clock
--          (nothing changed: call again then); {-1, 0} the caller no longer
--          holds the leader lock (nothing changed)
-- bound: O(log N)

-- The numbers are checked as text: they are stored and put in the job id as
-- given, so only plain decimal digits are accepted (no 1e3, 0x10, 007).
if ARGV[3] == '' then return redis.error_reply('ERR courier: empty schedule name') end
if not string.match(ARGV[4], '^[1-9]%d*$') or #ARGV[4] > 15 then
  return redis.error_reply('ERR courier: fire time must be a time in ms')
end
for i = 5, 6 do
  if not string.match(ARGV[i], '^%d+$') or #ARGV[i] > 12 or (#ARGV[i] > 1 and string.sub(ARGV[i], 1, 1) == '0') then
    return redis.error_reply('ERR courier: max attempts and timeout must be integers from 0 to 999999999999')
  end
end
local hdrs = ARGV[8] or ''
if hdrs ~= '' and (#hdrs < 2 or #hdrs > 16384 or string.byte(hdrs, #hdrs) ~= 10) then
  return redis.error_reply('ERR courier: headers must be 2 to 16384 bytes ending in a newline')
end
local fire = tonumber(ARGV[4])
if not fenced(KEYS[4], ARGV[1]) then return {-1, 0} end

local now = now_ms()
if fire > now then return {-2, now} end
local last = tonumber(redis.call('HGET', KEYS[3], ARGV[3]))
if last and last >= fire then return {0, now} end
redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
local id = 'periodic:' .. ARGV[3] .. ':' .. ARGV[4]
if redis.call('HEXISTS', KEYS[1], id) == 1 then return {0, now} end
local prev = head_ms(KEYS[2])
local rec = 'c3;0;' .. ARGV[5] .. ';' .. ARGV[6] .. ';' .. ms_str(now) .. ';0;' .. ARGV[7]
if hdrs ~= '' then -- c4: with a headers section (record.lua)
  rec = 'c4;0;' .. ARGV[5] .. ';' .. ARGV[6] .. ';' .. ms_str(now) .. ';0;' .. #hdrs .. ';' .. hdrs .. ARGV[7]
end
redis.call('HSET', KEYS[1], id, rec)
redis.call('ZADD', KEYS[2], ARGV[4], id)
redis.call('HDEL', KEYS[5], id) -- left behind under this id (see record.lua)
wake(ARGV[2], prev, fire)
return {1, now}
