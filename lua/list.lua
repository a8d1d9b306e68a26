-- list.lua: read one page of a queue's ready, scheduled, active or completed
-- jobs (read only). The dead set has its own page, deadlist.lua.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] due:high zset
-- KEYS[4] due:low zset   KEYS[5] active zset   KEYS[6] state hash
-- KEYS[7] claims hash   KEYS[8] opts hash   KEYS[9] completed zset
-- KEYS[10] results hash   KEYS[11] (optional) the kids zset of job keys
--   (keys.lua): the keyed jobs that wait, listed as a fourth level 'k'
--   after the low one (ready), or merged with the others (scheduled)
-- ARGV[1] what = 'ready' (due at or before the Redis clock's now) |
--   'scheduled' (due later) | 'active' | 'completed' (complete.lua)
-- ARGV[2] limit = most jobs on the page, 1 to 1000
-- ARGV[3] cursor level: 'h', 'n', 'l' or 'k' for 'ready' (the previous page's
--   last job's level), '' otherwise and at the start
-- ARGV[4] cursor score: that job's run-at, lease deadline or finish time
--   in ms ('' = from the start)   ARGV[5] cursor id ('' when ARGV[4] is '')
-- ARGV[6] max_bytes: the page ends before a record (with its result) that
--   would take its records past this many bytes; it always holds at least
--   one job
-- returns: {now_ms, more, then per job: id, level, score, record, state,
--   opts, claim, result}. level: 'h', 'n' or 'l', the due zset the job is
--   in ('n' for active and completed jobs); score: run-at (ready,
--   scheduled), lease deadline (active) or finish time (completed) in ms;
--   record: nil when the job has none (the scripts never leave one so);
--   state and opts: its state and options entries, '' when it has none
--   (see record.lua); claim: its claims value "<token>[@<process>]" when
--   active, else ''; result: a completed job's result, '' when it has none
--   or is not completed. more = 1 when a job follows the page's last one,
--   which is the next page's cursor.
-- Orders, each a total order over positions that do not depend on the
-- clock, so a page starts strictly after its cursor whether or not the
-- cursor's job is still there (rank_after), and a job that stays where it
-- is is listed exactly once:
--   ready: as a strict-priority claim takes them: the high level first,
--     then normal, then low, each by (run-at, id bytes). The cursor is
--     (level, run-at, id). A job that becomes due while the pages are read
--     is listed only if its level and run-at come after the cursor.
--   scheduled: by (run-at, id bytes), the three levels merged. A job that
--     becomes due between pages leaves the scheduled jobs.
--   active: by (lease deadline, id bytes), without record.lua's PIN (score
--     +inf). A renewal moves a job's deadline later: a job renewed after it
--     was listed can be listed again on a later page; none is skipped.
--   completed: newest finish first, by (finish time, id bytes) descending
--     (rank_before). A job that completes while the pages are read lands
--     before the cursor and is not listed; one the leader trims is gone.
-- bound: limit <= 1000; at most limit + 1 members examined for 'ready',
--   'active' and 'completed', limit + 1 + 3 * 100 for 'scheduled' (the
--   merge reads each level 100 at a time); O(log N) per level to find the
--   start, then O(log N + examined), plus the records (and results) within
--   max_bytes

if #ARGV ~= 6 then return redis.error_reply('ERR courier: 6 arguments expected') end
if not KEYS[10] then return redis.error_reply('ERR courier: list needs 10 keys') end
local what, limit, clevel, cscore, cid = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4], ARGV[5]
local max_bytes = tonumber(ARGV[6])
if what ~= 'ready' and what ~= 'scheduled' and what ~= 'active' and what ~= 'completed' then
  return redis.error_reply("ERR courier: list 'ready', 'scheduled', 'active' or 'completed'")
end
if not string.match(ARGV[2], '^%d+$') or limit < 1 or limit > 1000 then
  return redis.error_reply('ERR courier: limit must be 1 to 1000')
end
if cscore == '' then
  if cid ~= '' or clevel ~= '' then return redis.error_reply('ERR courier: cursor id or level without a score') end
elseif not string.match(cscore, '^%d+$') or #cscore > 15 or cid == '' then
  return redis.error_reply('ERR courier: cursor must be whole ms (at most 15 digits) and an id')
elseif (what == 'ready') ~= (clevel == 'h' or clevel == 'n' or clevel == 'l' or clevel == 'k') then
  return redis.error_reply("ERR courier: cursor level must be 'h', 'n', 'l' or 'k' for 'ready', '' otherwise")
end
if not max_bytes or not string.match(ARGV[6], '^%d+$') or max_bytes < 1 then
  return redis.error_reply('ERR courier: max_bytes must be positive')
end

local now = now_ms()
local d = dues(KEYS[3], KEYS[2], KEYS[4])
local lvs = LEVELS
if KEYS[11] then
  d.k = KEYS[11]
  lvs = {'h', 'n', 'l', 'k'}
end
-- ids, levels, scores: the page's jobs and one more, when there is one.
local ids, levels, scores = {}, {}, {}
local function add(id, lv, score)
  ids[#ids + 1] = id
  levels[#levels + 1] = lv
  scores[#scores + 1] = score
end

if what == 'ready' then
  -- Level by level, from the cursor's; each up to now.
  local past = cscore ~= ''
  for _, lv in ipairs(lvs) do
    if past and lv == clevel then past = false end
    if not past and #ids <= limit then
      local start = 0
      if cscore ~= '' and lv == clevel then start = rank_after(d[lv], cscore, cid) end
      local got = redis.call('ZRANGE', d[lv], start, start + limit - #ids, 'WITHSCORES')
      for i = 1, #got, 2 do
        local score = tonumber(got[i + 1])
        if score > now then break end
        add(got[i], lv, score)
      end
    end
  end
elseif what == 'scheduled' then
  -- A merge of the three levels, each read from its first job after the
  -- cursor and after now, CHUNK members at a time.
  local CHUNK = math.min(limit + 1, 100)
  local heads = {}
  for _, lv in ipairs(lvs) do
    local k = d[lv]
    local start = redis.call('ZCOUNT', k, '-inf', now)
    if cscore ~= '' then start = math.max(start, rank_after(k, cscore, cid)) end
    heads[#heads + 1] = {lv = lv, key = k, pos = start, got = {}, i = 1}
  end
  -- peek returns the next member of level h and its score, or nil.
  local function peek(h)
    if h.i > #h.got then
      if h.done then return nil end
      h.got = redis.call('ZRANGE', h.key, h.pos, h.pos + CHUNK - 1, 'WITHSCORES')
      h.pos, h.i = h.pos + CHUNK, 1
      if #h.got < 2 * CHUNK then h.done = true end
      if #h.got == 0 then return nil end
    end
    return h.got[h.i], tonumber(h.got[h.i + 1])
  end
  while #ids <= limit do
    local best, bid, bscore = nil, nil, nil
    for _, h in ipairs(heads) do
      local id, score = peek(h)
      if id and (not best or score < bscore or (score == bscore and bytes_after(bid, id))) then
        best, bid, bscore = h, id, score
      end
    end
    if not best then break end
    best.i = best.i + 2
    add(bid, best.lv, bscore)
  end
elseif what == 'completed' then
  -- From the newest down, limit + 1 members: the set's last ones, or those
  -- up to the last before the cursor.
  local got = {}
  if cscore == '' then
    got = redis.call('ZRANGE', KEYS[9], -(limit + 1), -1, 'WITHSCORES')
  else
    local last = rank_before(KEYS[9], cscore, cid)
    if last >= 0 then got = redis.call('ZRANGE', KEYS[9], math.max(last - limit, 0), last, 'WITHSCORES') end
  end
  for i = #got - 1, 1, -2 do add(got[i], 'n', tonumber(got[i + 1])) end
else
  local start = 0
  if cscore ~= '' then start = rank_after(KEYS[5], cscore, cid) end
  local got = redis.call('ZRANGE', KEYS[5], start, start + limit, 'WITHSCORES')
  for i = 1, #got, 2 do
    if got[i] == PIN then break end -- score +inf: the last member
    add(got[i], 'n', tonumber(got[i + 1]))
  end
end

local out = {now, 0}
local n, bytes = math.min(#ids, limit), 0
if #ids > limit then out[2] = 1 end
-- Records can be large (a payload is up to 256 MiB): stop at max_bytes.
for i = 1, n do
  bytes = bytes + redis.call('HSTRLEN', KEYS[1], ids[i])
  if what == 'completed' then bytes = bytes + redis.call('HSTRLEN', KEYS[10], ids[i]) end
  if i > 1 and bytes > max_bytes then
    n, out[2] = i - 1, 1
    break
  end
end
if n == 0 then return out end
local page = {unpack(ids, 1, n)}
local recs = redis.call('HMGET', KEYS[1], unpack(page))
local st, os, cl, rs = {}, opts_of(KEYS[8], page) or {}, {}, {}
if redis.call('EXISTS', KEYS[6]) == 1 then st = redis.call('HMGET', KEYS[6], unpack(page)) end
if what == 'active' then cl = redis.call('HMGET', KEYS[7], unpack(page)) end
if what == 'completed' then rs = redis.call('HMGET', KEYS[10], unpack(page)) end
for i = 1, n do
  local o = 8 * i - 5
  out[o], out[o + 1], out[o + 2], out[o + 3] = ids[i], levels[i], scores[i], recs[i]
  out[o + 4], out[o + 5], out[o + 6], out[o + 7] = st[i] or '', os[i] or '', cl[i] or '', rs[i] or ''
end
return out
