-- recover.lua: return jobs whose lease expired (their worker died or hung) to
-- due now; the attempt stays spent, so a job that kills its worker every time
-- ends in dead instead of looping. A carrier duty: only the queue's leader
-- runs it (fenced).
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] claims hash   KEYS[6] state hash   KEYS[7] leader hash (the queue's leader lock)
-- KEYS[8] due:high zset   KEYS[9] due:low zset   KEYS[10] opts hash
-- KEYS[11] unique hash   KEYS[12] unique:exp zset (a job goes back to the
--   due zset of its priority level; one that dies releases its unique key)
-- KEYS[13] history hash   KEYS[14] history:minutes zset (record.lua's
--   history_add): the jobs back to due count as retried, those moved to
--   dead as died
-- KEYS[15..21] the seven keys of job keys (keys.lua's kset): a keyed job's
--   slot is released (kfree), and one with attempts left waits among its
--   key's again (kput)
-- ARGV[1] wake channel   ARGV[2] limit   ARGV[3] default max attempts (for jobs without their own)
-- ARGV[4] leader field (<client-uuid>:<holder>)
-- returns: {recovered, dead}, or {-1, 0} when the caller no longer holds the
--          leader lock (nothing changed)
-- bound: limit <= 1000; O(limit log N), whatever the payloads' size: the
--   records are never read (but for jobs claimed by an older version, see
--   record.lua), only the state entries

local limit, defmax = tonumber(ARGV[2]), tonumber(ARGV[3])
if not limit or limit < 1 or limit > 1000 then return redis.error_reply('ERR courier: limit must be 1 to 1000') end
if not defmax or defmax < 1 then return redis.error_reply('ERR courier: default max attempts must be >= 1') end
if not KEYS[21] then return redis.error_reply('ERR courier: recover needs the due levels, opts, unique and history keys and those of job keys') end
if not fenced(KEYS[7], ARGV[4]) then return {-1, 0} end

local now = now_ms()
local ids = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', '(' .. now, 'LIMIT', 0, limit)
if #ids == 0 then return {0, 0} end
local d = dues(KEYS[8], KEYS[2], KEYS[9])
local prev = heads_ms(d)
local os = opts_of(KEYS[10], ids)
local toks = redis.call('HMGET', KEYS[5], unpack(ids))
local st = {}
if redis.call('EXISTS', KEYS[6]) == 1 then st = redis.call('HMGET', KEYS[6], unpack(ids)) end
redis.call('ZREM', KEYS[3], unpack(ids))
redis.call('HDEL', KEYS[5], unpack(ids))
local now_s = ms_str(now)
local states, due, dead, died, died_os = {}, {h = {}, n = {}, l = {}}, {}, {}, {}
local ndue = 0
local kj = {} -- keyed jobs back to waiting: {id, key, level, run-at}
for i, id in ipairs(ids) do
  -- A job whose record is gone (deleted by hand) has nothing to run.
  if redis.call('HEXISTS', KEYS[1], id) == 1 then
    -- Without a state entry, the job was claimed with the fresh default
    -- header: no attempt spent, the queue's max.
    local attempts, max
    if st[i] then attempts, max = st_decode(st[i]) end
    local tok = tonumber(claim_token(toks[i]) or '')
    if not attempts and not st[i] and tok and tok < OLD_TOKEN then
      local h = rec_decode(redis.call('HGET', KEYS[1], id)) -- the slow path of record.lua
      if h then attempts, max = h.attempts, h.max end
    end
    attempts, max = (attempts or 0) + 1, max or 0
    local err = 'lease expired: the worker running attempt ' .. attempts .. ' stopped responding'
    local lim = defmax
    if max > 0 then lim = max end
    if attempts >= lim then
      err = err .. '; no attempts left'
      dead[#dead + 1] = now_s
      dead[#dead + 1] = id
      died[#died + 1] = id
      died_os[#died] = os and os[i]
    else
      local o = os and os[i]
      local key = o and key_of(o)
      if key then
        kj[#kj + 1] = {id, key, level_of(o), now}
      else
        local z = due[level_of(o)]
        z[#z + 1] = now_s
        z[#z + 1] = id
      end
      ndue = ndue + 1
    end
    states[#states + 1] = id
    states[#states + 1] = st_encode(attempts, max, err)
  end
end
if #states > 0 then redis.call('HSET', KEYS[6], unpack(states)) end
zadd_levels(d, due)
if #dead > 0 then
  redis.call('ZADD', KEYS[4], unpack(dead))
  if os then finished(KEYS[11], KEYS[12], died, died_os, now) end
end
if ndue > #kj then wake(ARGV[1], prev, now) end
if os then
  -- every keyed job that left active gives its slot back, whatever became of it
  local ks = kset(15)
  wake(ARGV[1], nil, kfree_of(ks, os, now))
  wake(ARGV[1], nil, kput(ks, kj, now))
end
-- The history, after the work (it never fails the recovery).
history_add(KEYS[13], KEYS[14], now, 'r', ndue)
history_add(KEYS[13], KEYS[14], now, 'd', #dead / 2)
return {ndue, #dead / 2}
