-- ack.lua: delete finished jobs; a stale claim is ignored.
-- KEYS[1] jobs hash   KEYS[2] active zset   KEYS[3] claims hash   KEYS[4] state hash
-- KEYS[5] opts hash   KEYS[6] unique hash   KEYS[7] unique:exp zset
-- KEYS[8] history hash   KEYS[9] history:minutes zset (record.lua's
--   history_add): the jobs deleted count as succeeded
-- KEYS[10..16] (optional) the seven keys of job keys (keys.lua's kset):
--   with them, ARGV[1] is the queue's wake channel, and a keyed job's slot
--   is released (kfree), its key woken on the channel when it was parked
-- ARGV: pairs of id, claim (the claim token the worker got), from ARGV[2]
--   with the keys of job keys
-- returns: number of jobs deleted (pairs whose job is not active under that
--   claim are skipped; a repeated id counts once)
-- A finished job's unique key is released, or kept for its window, and a
-- retained id remembered (options.lua's finished).
-- bound: <= 1000 pairs; O(n log N)

if not KEYS[9] then return redis.error_reply('ERR courier: ack needs the opts, unique and history keys') end
local ks, from = nil, 1
if KEYS[16] then ks, from = kset(10), 2 end
local ids, toks = pairs_from(from, 1000)
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
local now = now_ms()
redis.call('HDEL', KEYS[1], unpack(done))
redis.call('HDEL', KEYS[3], unpack(done))
-- One EXISTS for a queue without failed jobs or options (the common case).
if redis.call('EXISTS', KEYS[4], KEYS[5]) > 0 then
  if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('HDEL', KEYS[4], unpack(done)) end
  local os = opts_of(KEYS[5], done)
  if os then
    finished(KEYS[6], KEYS[7], done, os, now)
    if ks then wake(ARGV[1], nil, kfree_of(ks, os, now)) end
    redis.call('HDEL', KEYS[5], unpack(done))
  end
end
local acked = redis.call('ZREM', KEYS[2], unpack(done))
history_add(KEYS[8], KEYS[9], now, 's', acked) -- after the work; never fails it
return acked
