-- enqueue.lua: add jobs to a queue; an id that exists is reported, never
-- overwritten, and so is a unique key that another job holds.
-- KEYS[1] jobs hash   KEYS[2] due zset (normal)   KEYS[3] state hash
-- KEYS[4] due:high zset   KEYS[5] due:low zset   KEYS[6] opts hash
-- KEYS[7] unique hash   KEYS[8] unique:exp zset   KEYS[9] settings hash
--   (field id_retention: ms a caller-supplied id stays refused after its job
--   finished; written by the daemons that serve the queue)
-- ARGV[1] wake channel   ARGV[2] n = number of jobs
-- then 7 values per job: id, at_ms (absolute run-at, ms since epoch; -1 =
--   none), delay_ms (used when at_ms is -1), max_attempts (0 = queue
--   default), timeout_ms (0 = queue default), payload (bytes, may be empty),
--   options: '' for a job of the normal priority without a unique key whose
--   id was generated, else "<level>;<since>;<for_ms>;<caller>;" .. unique_key
--   (see record.lua's opts; caller: '1' when the caller chose the id)
-- returns: array of n values: 1 = enqueued, 0 = the id exists, or is
--   retained after its job finished (that job untouched; a later copy of an
--   id within the same call counts as existing), or a string: the unique key
--   is held, by the job of that id (nothing written for this job)
-- bound: n <= 1000; O(n log N) plus the payloads given; an existing record is
--   never read (HSETNX), whatever its size

local n = tonumber(ARGV[2])
if not n or n < 1 or n > 1000 then return redis.error_reply('ERR courier: 1 to 1000 jobs per call') end
if #ARGV ~= 2 + n * 7 then return redis.error_reply('ERR courier: 7 values per job expected') end
if not KEYS[9] then return redis.error_reply('ERR courier: enqueue needs the due levels, opts, unique and settings keys') end
-- one pattern match per job for the common case (every value well formed);
-- a job that fails it is checked field by field to name what is wrong
local find = string.find
local any_opts = false
for i = 0, n - 1 do
  local b = 2 + i * 7
  local id, at, d, m, t = ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5]
  if id == '' or #at > 15 or #d > 12 or #m > 12 or #t > 12
    or not find(at .. ';' .. d .. ';' .. m .. ';' .. t, '^%-?%d+;%d+;%d+;%d+$')
    or (at ~= '-1' and not find(at, '^%d')) then
    if id == '' then return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' has an empty id') end
    if at ~= '-1' and (not find(at, '^%d+$') or #at > 15) then
      return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' at_ms must be -1 or a time in ms')
    end
    for j = 3, 5 do
      local v = ARGV[b + j]
      if not find(v, '^%d+$') or #v > 12 then
        return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' field ' .. j .. ' must be an integer from 0 to 999999999999')
      end
    end
  end
  local o = ARGV[b + 7]
  if o ~= '' then
    local level, since, w, caller = string.match(o, '^([hnl]);([ef%-]);(%d+);([01]);')
    if not level or #w > 12 then
      return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' options must be "<h|n|l>;<e|f|->;<for_ms>;<0|1>;<unique key>"')
    end
    any_opts = true
  end
end

local now = now_ms()
local d = dues(KEYS[4], KEYS[2], KEYS[5])
-- the other levels' heads matter only when they hold jobs
local prev
if redis.call('EXISTS', KEYS[4], KEYS[5]) > 0 then prev = heads_ms(d) else prev = head_ms(KEYS[2]) end
local added, out = {}, {}
local earliest = nil
local now_s = ms_str(now)
local enq = ';' .. now_s .. ';0;'

-- read the score of job i (0-based) as a number and a string, formatted
-- only when it must be computed
local function score_of(b)
  local score, score_s = tonumber(ARGV[b + 2]), ARGV[b + 2]
  if score < 0 then
    if ARGV[b + 3] == '0' then
      score, score_s = now, now_s
    else
      score = now + tonumber(ARGV[b + 3])
      score_s = ms_str(score)
    end
  end
  return score, score_s
end

if not any_opts then
  -- The common case: every job of the normal level, without a unique key,
  -- its id generated.
  local zadd = {}
  for i = 0, n - 1 do
    local b = 2 + i * 7
    local id = ARGV[b + 1]
    -- HSETNX tests for the id without reading what is stored under it; a
    -- later copy of an id in this call finds the first one.
    out[i + 1] = redis.call('HSETNX', KEYS[1], id, 'c3;0;' .. ARGV[b + 4] .. ';' .. ARGV[b + 5] .. enq .. ARGV[b + 6])
    if out[i + 1] == 1 then
      local score, score_s = score_of(b)
      zadd[#zadd + 1] = score_s
      zadd[#zadd + 1] = id
      added[#added + 1] = id
      if earliest == nil or score < earliest then earliest = score end
    end
  end
  if #added > 0 then
    redis.call('ZADD', KEYS[2], unpack(zadd))
    -- a state or options entry left behind under a reused id (see record.lua) is not this job's
    if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('HDEL', KEYS[3], unpack(added)) end
    if redis.call('EXISTS', KEYS[6]) == 1 then redis.call('HDEL', KEYS[6], unpack(added)) end
  end
  wake(ARGV[1], prev, earliest)
  return out
end

local zadd = {h = {}, n = {}, l = {}}
local os = {}
local uniques = redis.call('EXISTS', KEYS[7]) == 1
-- the queue's id retention, read only when a job has options
local retain = tonumber(redis.call('HGET', KEYS[9], 'id_retention') or '0') or 0
for i = 0, n - 1 do
  local b = 2 + i * 7
  local id, o = ARGV[b + 1], ARGV[b + 7]
  local level, since, w, caller, key = 'n', '-', 0, '0', ''
  if o ~= '' then
    local ws
    level, since, ws, caller, key = string.match(o, '^([hnl]);([ef%-]);(%d+);([01]);(.*)$')
    w = tonumber(ws)
  end
  local holder = nil
  if key ~= '' and uniques then holder = uniq_held(KEYS[7], KEYS[1], 'k:' .. key, now) end
  if holder then
    out[i + 1] = holder
  elseif caller == '1' and uniques and uniq_held(KEYS[7], KEYS[1], 'i:' .. id, now) then
    out[i + 1] = 0 -- a retained id: its job finished within the retention
  else
    -- HSETNX tests for the id without reading what is stored under it; a
    -- later copy of an id in this call finds the first one.
    out[i + 1] = redis.call('HSETNX', KEYS[1], id, 'c3;0;' .. ARGV[b + 4] .. ';' .. ARGV[b + 5] .. enq .. ARGV[b + 6])
  end
  if out[i + 1] == 1 then
    local score, score_s = score_of(b)
    local z = zadd[level]
    z[#z + 1] = score_s
    z[#z + 1] = id
    added[#added + 1] = id
    if earliest == nil or score < earliest then earliest = score end
    local r = 0
    if caller == '1' then r = retain end
    if level ~= 'n' or key ~= '' or r > 0 then
      os[#os + 1] = id
      os[#os + 1] = level .. ';' .. since .. ';' .. w .. ';' .. r .. ';' .. key
    end
    if key ~= '' then
      local untl = 0
      if since == 'e' and w > 0 then untl = now + w end
      uniq_set(KEYS[7], KEYS[8], 'k:' .. key, true, untl, id)
      uniques = true
    end
  end
end
if #added > 0 then
  for level, z in pairs(zadd) do
    if #z > 0 then redis.call('ZADD', d[level], unpack(z)) end
  end
  -- a state or options entry left behind under a reused id (see record.lua) is not this job's
  if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('HDEL', KEYS[3], unpack(added)) end
  if redis.call('EXISTS', KEYS[6]) == 1 then redis.call('HDEL', KEYS[6], unpack(added)) end
  if #os > 0 then redis.call('HSET', KEYS[6], unpack(os)) end
end
wake(ARGV[1], prev, earliest)
return out
