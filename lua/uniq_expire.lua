-- uniq_expire.lua: (carrier, fenced) forget the unique keys and retained
-- ids whose window has ended (Redis 7.0 has no per-field expiry), oldest
-- window first, in bounded batches.
-- KEYS[1] unique hash   KEYS[2] unique:exp zset   KEYS[3] jobs hash
-- KEYS[4] leader hash (the queue's leader lock)
-- ARGV[1] leader field (<client-uuid>:<holder>)   ARGV[2] limit (1..1000)
-- returns: {forgotten, looked}: the fields deleted, and the window entries
--   read (looked == limit: call again), or {-1, 0} when the caller no
--   longer holds the leader lock (nothing changed)
-- bound: limit <= 1000; O(limit log N)
-- A field whose window ended but whose job has not finished stays (its
-- job still holds it; options.lua's finished frees it); its window entry
-- goes, as does one whose field was taken again without a window.

local limit = tonumber(ARGV[2])
if not limit or limit < 1 or limit > 1000 then return redis.error_reply('ERR courier: limit must be 1 to 1000') end
if not fenced(KEYS[4], ARGV[1]) then return {-1, 0} end

local now = now_ms()
local fs = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ms_str(now), 'LIMIT', 0, limit)
if #fs == 0 then return {0, 0} end
local es = redis.call('HMGET', KEYS[1], unpack(fs))
local gone = {}
for i, f in ipairs(fs) do
  if es[i] and not uniq_holder(KEYS[3], es[i], now) then gone[#gone + 1] = f end
end
redis.call('ZREM', KEYS[2], unpack(fs))
if #gone > 0 then redis.call('HDEL', KEYS[1], unpack(gone)) end
return {#gone, #fs}
