-- import.lua: add jobs brought over from another queue system (courier
-- import asynq) with the history they had there: attempts already spent,
-- the last error, a dead job straight into the dead set. Each job is
-- recorded in the import ledger, a set of the queue's slot, in the same
-- call that writes it: a job and its ledger entry are written together or
-- not at all, so a second run finds the entry and writes nothing.
-- KEYS[1] jobs hash   KEYS[2] due zset (normal)   KEYS[3] state hash
-- KEYS[4] due:high zset   KEYS[5] due:low zset   KEYS[6] opts hash
-- KEYS[7] unique hash   KEYS[8] unique:exp zset   KEYS[9] settings hash
-- KEYS[10] dead zset   KEYS[11] the import ledger (set of ledger members)
-- ARGV[1] wake channel   ARGV[2] n = number of jobs
-- ARGV[3] the version of the queue's layout the caller routed by ('' = no
--   check), refused as enqueue.lua refuses it: 'ERR courier: partition
--   retired' or 'ERR courier: layout <v>;<n>;<prev>', nothing written
-- then 11 values per job: ledger member (the job's id in the system it
--   came from), id, at_ms (absolute run-at, ms since epoch), attempts
--   (spent), max_attempts (0 = queue default), timeout_ms (0 = queue
--   default), error (the last error, may be empty), died_ms (-1 = not
--   dead; else the time of death, ms, and the job goes to the dead set),
--   options ('' or enqueue.lua's "<level>;<since>;<for_ms>;0;<unique key>";
--   a dead job's unique key is not taken), headers section ('' or
--   store/headers.go's, 2 to 16384 bytes ending in a newline), payload
-- returns: array of n values: 1 = imported, 2 = the ledger holds the member
--   (imported before: nothing written), 0 = the id exists (nothing
--   written), or a string: the unique key is held, by the job of that id
--   (nothing written)
-- bound: n <= 1000; O(n log N) plus the payloads given

local B, W = 3, 11 -- the jobs' values start after ARGV[B], W values each
local n = tonumber(ARGV[2])
if not n or n < 1 or n > 1000 or n % 1 ~= 0 then return redis.error_reply('ERR courier: 1 to 1000 jobs per call') end
if #ARGV ~= B + n * W then return redis.error_reply('ERR courier: 11 values per job expected') end
if not KEYS[11] then return redis.error_reply('ERR courier: import needs the queue keys, the dead set and the ledger') end
if ARGV[3] ~= '' and (not string.find(ARGV[3], '^%d+$') or #ARGV[3] > 16) then
  return redis.error_reply('ERR courier: the layout version must be digits or empty')
end
local find = string.find
for i = 0, n - 1 do
  local b = B + i * W
  local member, id, o, h = ARGV[b + 1], ARGV[b + 2], ARGV[b + 9], ARGV[b + 10]
  if member == '' or id == '' then return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' has an empty ledger member or id') end
  for j = 3, 6 do
    local v = ARGV[b + j]
    if not find(v, '^%d+$') or #v > 15 then
      return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' field ' .. j .. ' must be an integer from 0 to 999999999999999')
    end
  end
  if ARGV[b + 8] ~= '-1' and (not find(ARGV[b + 8], '^%d+$') or #ARGV[b + 8] > 15) then
    return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' died_ms must be -1 or a time in ms')
  end
  if o ~= '' then
    local w = string.match(o, '^[hnl];[ef%-];(%d+);0;')
    if not w or #w > 12 then
      return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' options must be "<h|n|l>;<e|f|->;<for_ms>;0;<unique key>"')
    end
  end
  if h ~= '' and (#h < 2 or #h > 16384 or string.byte(h, #h) ~= 10) then
    return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' headers must be 2 to 16384 bytes ending in a newline')
  end
end
local st = redis.call('HMGET', KEYS[9], 'retired', 'v', 'partitions', 'partitions_prev')
local cv = tonumber(ARGV[3])
if cv then
  if st[1] then return redis.error_reply('ERR courier: partition retired') end
  local pv = tonumber(st[2])
  if pv and pv > cv then
    return redis.error_reply('ERR courier: layout ' .. st[2] .. ';' .. (st[3] or '1') .. ';' .. (st[4] or ''))
  end
end

local now = now_ms()
local d = dues(KEYS[4], KEYS[2], KEYS[5])
local prev = heads_ms(d)
local earliest = nil
local enq = ';' .. ms_str(now) .. ';0;'
local out, added = {}, {}
local unique_live = redis.call('EXISTS', KEYS[7]) == 1
for i = 0, n - 1 do
  local b = B + i * W
  local member, id, at, attempts, max, timeout, err, died, o, h =
    ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5], ARGV[b + 6], ARGV[b + 7], ARGV[b + 8], ARGV[b + 9], ARGV[b + 10]
  local dead = died ~= '-1'
  local level, since, w, key = 'n', '-', '0', ''
  if o ~= '' then level, since, w, key = string.match(o, '^([hnl]);([ef%-]);(%d+);0;(.*)$') end
  if dead then key = '' end
  local f = nil
  if key ~= '' then f = 'k:' .. key end
  local holder = nil
  if f and unique_live then holder = uniq_holder(KEYS[1], redis.call('HGET', KEYS[7], f), now) end
  -- SMISMEMBER, not SISMEMBER: the minimal ACL of docs/security.md allows it
  if redis.call('SMISMEMBER', KEYS[11], member)[1] == 1 then
    out[i + 1] = 2
  elseif redis.call('HEXISTS', KEYS[1], id) == 1 then
    out[i + 1] = 0
  elseif holder then
    out[i + 1] = holder
  else
    out[i + 1] = 1
    local rec
    if h ~= '' then
      rec = 'c4;0;' .. max .. ';' .. timeout .. enq .. #h .. ';' .. h .. ARGV[b + 11]
    else
      rec = 'c3;0;' .. max .. ';' .. timeout .. enq .. ARGV[b + 11]
    end
    redis.call('HSET', KEYS[1], id, rec)
    -- the state entry carries what the record's fresh header cannot
    if attempts ~= '0' or err ~= '' then
      redis.call('HSET', KEYS[3], id, attempts .. ';' .. max .. ';' .. err)
    else
      redis.call('HDEL', KEYS[3], id) -- one left behind under this id is not this job's
    end
    redis.call('HDEL', KEYS[6], id)
    if dead then
      redis.call('ZADD', KEYS[10], died, id)
    else
      redis.call('ZADD', d[level], at, id)
      local score = tonumber(at)
      if earliest == nil or score < earliest then earliest = score end
      if level ~= 'n' or f then
        redis.call('HSET', KEYS[6], id, level .. ';' .. since .. ';' .. w .. ';0;' .. key)
      end
      if f then
        local untl = 0
        if since == 'e' and w ~= '0' then untl = now + tonumber(w) end
        uniq_set(KEYS[7], KEYS[8], f, true, untl, id)
        unique_live = true
      end
    end
    redis.call('SADD', KEYS[11], member)
    added[#added + 1] = id
  end
end
wake(ARGV[1], prev, earliest)
return out
