-- enqueue.lua: add jobs to a queue; an id that exists is reported, never overwritten.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] state hash
-- ARGV[1] wake channel   ARGV[2] n = number of jobs
-- then 6 values per job: id, at_ms (absolute run-at, ms since epoch; -1 = none),
--   delay_ms (used when at_ms is -1), max_attempts (0 = queue default),
--   timeout_ms (0 = queue default), payload (bytes, may be empty)
-- returns: array of n integers, 1 = enqueued, 0 = the id exists (that job
--   untouched; a later copy of an id within the same call counts as existing)
-- bound: n <= 1000; O(n log N) plus the payloads given; an existing record is
--   never read (HSETNX), whatever its size

local n = tonumber(ARGV[2])
if not n or n < 1 or n > 1000 then return redis.error_reply('ERR courier: 1 to 1000 jobs per call') end
if #ARGV ~= 2 + n * 6 then return redis.error_reply('ERR courier: 6 values per job expected') end
-- one pattern match per job for the common case (every value well formed);
-- a job that fails it is checked field by field to name what is wrong
local find = string.find
for i = 0, n - 1 do
  local b = 2 + i * 6
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
end

local now = now_ms()
local prev = head_ms(KEYS[2])
local zadd, added, out = {}, {}, {}
local earliest = nil
local now_s = ms_str(now)
local enq = ';' .. now_s .. ';0;'
for i = 0, n - 1 do
  local b = 2 + i * 6
  local id = ARGV[b + 1]
  -- HSETNX tests for the id without reading what is stored under it; a
  -- later copy of an id in this call finds the first one.
  out[i + 1] = redis.call('HSETNX', KEYS[1], id, 'c3;0;' .. ARGV[b + 4] .. ';' .. ARGV[b + 5] .. enq .. ARGV[b + 6])
  if out[i + 1] == 1 then
    -- the score as a string, formatted only when it must be computed
    local score, score_s = tonumber(ARGV[b + 2]), ARGV[b + 2]
    if score < 0 then
      if ARGV[b + 3] == '0' then
        score, score_s = now, now_s
      else
        score = now + tonumber(ARGV[b + 3])
        score_s = ms_str(score)
      end
    end
    zadd[#zadd + 1] = score_s
    zadd[#zadd + 1] = id
    added[#added + 1] = id
    if earliest == nil or score < earliest then earliest = score end
  end
end
if #added > 0 then
  redis.call('ZADD', KEYS[2], unpack(zadd))
  -- a state entry left behind under a reused id (see record.lua) is not this job's
  if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('HDEL', KEYS[3], unpack(added)) end
end
wake(ARGV[1], prev, earliest)
return out
