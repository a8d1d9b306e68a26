-- complete.lua: ack for a queue that retains finished jobs: each job held
-- under its claim leaves active and enters the completed set, with its
-- result and finish time; a stale claim is ignored, as in ack.lua.
-- KEYS[1] jobs hash   KEYS[2] active zset   KEYS[3] claims hash   KEYS[4] state hash
-- KEYS[5] opts hash   KEYS[6] unique hash   KEYS[7] unique:exp zset
-- KEYS[8] history hash   KEYS[9] history:minutes zset (record.lua's
--   history_add): the jobs completed count as succeeded
-- KEYS[10] completed zset (id → finish time, ms)   KEYS[11] results hash
-- KEYS[12..18] (optional) the seven keys of job keys (keys.lua's kset):
--   a keyed job's slot is released (kfree), its key woken on the wake
--   channel, ARGV[2], when it was parked; the pairs then start at ARGV[3]
-- ARGV[1] m = number of results (0 to the number of pairs)   then pairs of
--   id, claim (the claim token the worker got)   then m pairs of position
--   (1-based, into the id/claim pairs) and result (the handler's result
--   bytes), for the jobs whose result is not empty (as extend.lua's
--   progress reports)
-- returns: number of jobs completed (pairs whose job is not active under
--   that claim are skipped; a repeated id counts once, its first pair's
--   result kept)
-- A completed job keeps its record and its state entry (so Get, List and
-- an enqueue of its id find it, the last as a duplicate) until the leader
-- trims it (trim.lua); its claims entry, options entry and place in active
-- go as in ack.lua, and its unique key is released, or kept for its
-- window, and a retained id remembered (options.lua's finished). A
-- non-empty result is stored in the results hash; an empty one is not.
-- Out of memory: declared AllowOOM, as ack is: refusing it would leave the
-- finished jobs held (their slots taken, their leases renewed) until Redis
-- had room, and run them again if their process stopped meanwhile. It adds
-- per job a completed entry (the claims and active entries it frees are
-- about as large) and the result, at most worker.Config.MaxResultBytes:
-- memory grows by at most the queue's retained count times that bound,
-- which the leader's trim (AllowOOM too, it only deletes) keeps.
-- bound: <= 1000 pairs; O(n log N); the caller sends at most 4 MiB of
--   results per call (store.MaxCompleteBytes; one larger result alone)

if not KEYS[11] then return redis.error_reply('ERR courier: complete needs the completed and results keys') end
local m = tonumber(ARGV[1])
local base = 1 -- the pairs follow ARGV[base]
if KEYS[18] then base = 2 end
if not m or m < 0 or m % 1 ~= 0 or m * 4 > #ARGV - base then return redis.error_reply('ERR courier: m must be 0 to the number of jobs') end
local last = #ARGV - 2 * m
local ids, toks = pairs_from(base + 1, 1000, last)
if type(ids) == 'table' and ids.err then return ids end
local res = {} -- position → result
for j = last + 1, #ARGV, 2 do
  local pos = tonumber(ARGV[j])
  if not pos or pos < 1 or pos > #ids or pos ~= math.floor(pos) then
    return redis.error_reply('ERR courier: result position must be 1 to the number of jobs')
  end
  res[pos] = ARGV[j + 1]
end
if #ids == 0 then return 0 end
local ok = held(KEYS[3], ids, toks)
local done, seen, k = {}, {}, 0
local z, r = {}, {} -- ZADD's score/member list, HSET's field/value list
for i = 1, #ids do
  local id = ids[i]
  if ok[i] and not seen[id] then
    seen[id] = true
    k = k + 1
    done[k] = id
    z[2 * k] = id
    if res[i] and res[i] ~= '' then
      r[#r + 1] = id
      r[#r + 1] = res[i]
    end
  end
end
if k == 0 then return 0 end
local now = now_ms()
local now_s = ms_str(now)
for i = 1, 2 * k, 2 do z[i] = now_s end
redis.call('HDEL', KEYS[3], unpack(done))
local os = opts_of(KEYS[5], done)
if os then
  finished(KEYS[6], KEYS[7], done, os, now)
  if KEYS[18] then wake(ARGV[2], nil, kfree_of(kset(12), os, now)) end
  redis.call('HDEL', KEYS[5], unpack(done))
end
local moved = redis.call('ZREM', KEYS[2], unpack(done))
redis.call('ZADD', KEYS[10], unpack(z))
if #r > 0 then redis.call('HSET', KEYS[11], unpack(r)) end
history_add(KEYS[8], KEYS[9], now, 's', moved) -- after the work; never fails it
return moved
