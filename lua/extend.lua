-- extend.lua: renew the leases of running jobs (the batched heartbeat).
-- KEYS[1] active zset   KEYS[2] claims hash   KEYS[3] dead zset   KEYS[4] state hash
-- KEYS[5] cancelled zset (cancel.lua; the dead set of a job that an older
--   version cancelled, with the last error "cancelled")
-- ARGV[1] lease_ms   ARGV[2] m = number of progress reports (0 to the number
--   of pairs)   then pairs of id, claim   then m pairs of position (1-based,
--   into the id/claim pairs) and progress, "<percent>;" .. message: stored
--   in the claims value of a job still held, after its process, as
--   "\n<percent>;<now_ms>;" .. message (see store/progress.go), replacing
--   what was there. A report is only information: one that breaks the rule
--   (store.NormalPercent: percent a plain decimal, digits with an optional
--   fraction, no sign nor exponent, at most 100; the whole at most 512
--   bytes, no newline), and the report of a job not held, is dropped, and
--   the lease renewed all the same: a bad report never fails the call
-- returns: flat triples id, claim, why of the jobs whose lease was NOT
--   extended (lost: recovered, finished elsewhere, cancelled, or gone); why
--   is 'cancelled' for a job that was cancelled while it ran (cancel.lua),
--   else ''
-- bound: <= 1000 pairs; O(n log N)

local lease = tonumber(ARGV[1])
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end
if not KEYS[5] then return redis.error_reply('ERR courier: extend needs the dead, state and cancelled keys') end
local m = tonumber(ARGV[2])
if not m or m < 0 or m % 1 ~= 0 or m * 4 > #ARGV - 2 then return redis.error_reply('ERR courier: m must be 0 to the number of jobs') end
local last = #ARGV - 2 * m
local ids, toks = pairs_from(3, 1000, last)
if type(ids) == 'table' and ids.err then return ids end
if #ids == 0 then return {} end
local reports = {} -- {position, percent, message}, parsed once, in ARGV order
for j = last + 1, #ARGV, 2 do
  local pos, p = tonumber(ARGV[j]), ARGV[j + 1]
  if not pos or pos < 1 or pos > #ids or pos ~= math.floor(pos) then
    return redis.error_reply('ERR courier: progress position must be 1 to the number of jobs')
  end
  local pct, msg
  if #p <= 512 then pct, msg = string.match(p, '^(%d+%.?%d*);(.*)$') end
  if pct and tonumber(pct) <= 100 and not string.find(msg, '\n', 1, true) then
    reports[#reports + 1] = {pos, pct, msg}
  end -- else dropped: see the header
end

local now = now_ms()
local deadline = ms_str(now + lease)
local ok, cur = held(KEYS[2], ids, toks)
local renew, lost = {}, {}
for i, id in ipairs(ids) do
  if ok[i] then
    renew[#renew + 1] = deadline
    renew[#renew + 1] = id
  else
    -- Rare: read why, so the worker ends the handler with the right cause.
    local why = ''
    if redis.call('ZSCORE', KEYS[5], id) then
      why = CANCELLED
    elseif redis.call('ZSCORE', KEYS[3], id) then
      local _, _, err = st_decode(redis.call('HGET', KEYS[4], id) or '')
      if err == CANCELLED then why = CANCELLED end
    end
    lost[#lost + 1] = id
    lost[#lost + 1] = toks[i]
    lost[#lost + 1] = why
  end
end
if #renew > 0 then redis.call('ZADD', KEYS[1], 'XX', unpack(renew)) end
if m > 0 then
  local now_s, sets = ms_str(now), {}
  for _, r in ipairs(reports) do
    local pos = r[1]
    if ok[pos] then
      -- the claims value up to its progress, with the '@' a bare token lacks
      local base = cur[pos]
      local nl = string.find(base, '\n', 1, true)
      if nl then base = string.sub(base, 1, nl - 1) end
      if not string.find(base, '@', 1, true) then base = base .. '@' end
      sets[#sets + 1] = ids[pos]
      sets[#sets + 1] = base .. '\n' .. r[2] .. ';' .. now_s .. ';' .. r[3]
    end
  end
  if #sets > 0 then redis.call('HSET', KEYS[2], unpack(sets)) end
end
return lost
