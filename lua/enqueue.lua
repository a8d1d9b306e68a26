-- enqueue.lua: add jobs to a queue; an id that exists is reported, never overwritten.
-- KEYS[1] jobs hash   KEYS[2] due zset
-- ARGV[1] wake channel   ARGV[2] n = number of jobs
-- then 6 values per job: id, at_ms (absolute run-at, ms since epoch; -1 = none),
--   delay_ms (used when at_ms is -1), max_attempts (0 = queue default),
--   timeout_ms (0 = queue default), payload (bytes, may be empty)
-- returns: array of n integers, 1 = enqueued, 0 = the id exists (that job untouched)
-- bound: n <= 1000; O(n log N)

local n = tonumber(ARGV[2])
if not n or n < 1 or n > 1000 then return redis.error_reply('ERR courier: 1 to 1000 jobs per call') end
if #ARGV ~= 2 + n * 6 then return redis.error_reply('ERR courier: 6 values per job expected') end
for i = 0, n - 1 do
  local b = 2 + i * 6
  if ARGV[b + 1] == '' then return redis.error_reply('ERR courier: empty id') end
  for j = 2, 5 do
    local v = ARGV[b + j]
    if not string.match(v, '^%-?%d+$') or #v > 15 then
      return redis.error_reply('ERR courier: job ' .. (i + 1) .. ' field ' .. j .. ' is not an integer')
    end
  end
end

local now = now_ms()
local prev = head_ms(KEYS[2])
local earliest = nil
local out = {}
for i = 0, n - 1 do
  local b = 2 + i * 6
  local id, at = ARGV[b + 1], tonumber(ARGV[b + 2])
  local score = at
  if at < 0 then score = now + tonumber(ARGV[b + 3]) end
  local rec = 'c1;0;0;' .. ARGV[b + 4] .. ';' .. ARGV[b + 5] .. ';' .. string.format('%d', now) .. ';0;' .. ARGV[b + 6]
  if redis.call('HSETNX', KEYS[1], id, rec) == 1 then
    redis.call('ZADD', KEYS[2], score, id)
    if earliest == nil or score < earliest then earliest = score end
    out[i + 1] = 1
  else
    out[i + 1] = 0
  end
end
wake(ARGV[1], prev, earliest)
return out
