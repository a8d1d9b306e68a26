-- deadlist.lua: read one page of the dead set in its order, oldest death first
-- (read only).
-- KEYS[1] jobs hash   KEYS[2] dead zset   KEYS[3] state hash
-- ARGV[1] limit = most jobs on the page, 1 to 1000
-- ARGV[2] mode = 'jobs' (ids, times of death, records and state entries) |
--   'ids' (no records)
-- ARGV[3] cursor time: time of death in ms of the previous page's last job
--   ('' = from the start)
-- ARGV[4] cursor id: that job's id ('' when ARGV[3] is '')
-- ARGV[5] until_ms: only jobs that died at or before it ('' = no bound,
--   'now' = the Redis clock of this call, returned as now_ms)
-- ARGV[6] max_bytes (mode 'jobs'; ignored in mode 'ids'): the page ends
--   before a record that would take its records past this many bytes; it
--   always holds at least one job
-- returns: {now_ms, more, then per job: id, died_ms, record, state}, without
--   the records and state entries in mode 'ids'. state is the job's state
--   entry, '' when it has none (it overrides the record's attempts, max and
--   last error: see record.lua). more = 1 when the set holds a job after the
--   page's last one (within until_ms): that last job's (died_ms, id) is the
--   next page's cursor. record is nil when the job has none (the scripts
--   never leave one so).
-- The set is ordered by (score, member bytes). A page starts at the first
-- member strictly after the cursor in that order, whether or not the
-- cursor's own job is still in the set: a job dead all along is listed
-- exactly once, whatever leaves or joins between pages. Scores are whole ms,
-- as every script writes them.
-- bound: limit <= 1000; O(log N) calls to find the start (ZRANK, or ZCOUNT
--   and a binary search over the members sharing the cursor's score), then
--   O(log N + limit)

if #ARGV ~= 6 then return redis.error_reply('ERR courier: 6 arguments expected') end
local limit, mode, cscore, cid, until_s = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local max_bytes = tonumber(ARGV[6])
if not string.match(ARGV[1], '^%d+$') or limit < 1 or limit > 1000 then
  return redis.error_reply('ERR courier: limit must be 1 to 1000')
end
if mode ~= 'jobs' and mode ~= 'ids' then return redis.error_reply("ERR courier: mode must be 'jobs' or 'ids'") end
if cscore == '' then
  if cid ~= '' then return redis.error_reply('ERR courier: cursor id without a time') end
elseif not string.match(cscore, '^%d+$') or #cscore > 15 or cid == '' then
  return redis.error_reply('ERR courier: cursor must be whole ms (at most 15 digits) and an id')
end
if until_s ~= '' and until_s ~= 'now' and (not string.match(until_s, '^%d+$') or #until_s > 15) then
  return redis.error_reply("ERR courier: until_ms must be whole ms (at most 15 digits), 'now' or empty")
end
if mode == 'jobs' and (not max_bytes or not string.match(ARGV[6], '^%d+$') or max_bytes < 1) then
  return redis.error_reply('ERR courier: max_bytes must be positive')
end

-- after reports whether a sorts after b as a sorted set orders members: by
-- bytes, the shorter first on a tie. Lua's own < follows the server's
-- collation locale (Redis calls setlocale(LC_COLLATE, "")), not bytes.
local function after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

local key = KEYS[2]
local start = 0
if cscore ~= '' then
  local sc = redis.call('ZSCORE', key, cid)
  if sc and tonumber(sc) == tonumber(cscore) then
    start = redis.call('ZRANK', key, cid) + 1
  else
    -- The members with exactly the cursor's score hold ranks [lo, hi), by
    -- bytes: find the first of them after the cursor's id (hi when none).
    local lo = redis.call('ZCOUNT', key, '-inf', '(' .. cscore)
    local hi = redis.call('ZCOUNT', key, '-inf', cscore)
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if after(redis.call('ZRANGE', key, mid, mid)[1], cid) then hi = mid else lo = mid + 1 end
    end
    start = lo
  end
end

local now = now_ms()
local until_ms = tonumber(until_s) -- nil = no bound
if until_s == 'now' then until_ms = now end
-- One member beyond the limit tells whether there is more.
local got = redis.call('ZRANGE', key, start, start + limit, 'WITHSCORES')
local ids, scores, more = {}, {}, 0
for i = 1, #got, 2 do
  local score = tonumber(got[i + 1])
  if until_ms and score > until_ms then break end
  if #ids == limit then
    more = 1
    break
  end
  ids[#ids + 1] = got[i]
  scores[#scores + 1] = score
end

local out = {now, more}
if mode == 'ids' then
  for i, id in ipairs(ids) do
    out[2 * i + 1] = id
    out[2 * i + 2] = scores[i]
  end
  return out
end
if #ids == 0 then return out end
-- Records can be large (a payload is up to 256 MiB): stop at max_bytes.
local n, bytes = 0, 0
for i, id in ipairs(ids) do
  bytes = bytes + redis.call('HSTRLEN', KEYS[1], id)
  if i > 1 and bytes > max_bytes then
    out[2] = 1
    break
  end
  n = i
end
local recs = redis.call('HMGET', KEYS[1], unpack(ids, 1, n))
local st = {}
if redis.call('EXISTS', KEYS[3]) == 1 then st = redis.call('HMGET', KEYS[3], unpack(ids, 1, n)) end
for i = 1, n do
  out[4 * i - 1] = ids[i]
  out[4 * i] = scores[i]
  out[4 * i + 1] = recs[i]
  out[4 * i + 2] = st[i] or ''
end
return out
