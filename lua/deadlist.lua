-- deadlist.lua: read one page of the dead set in its order, oldest death first,
-- optionally only the jobs that match a filter (read only); or of the
-- cancelled set (cancel.lua), oldest cancel first: its cancel times are
-- read as times of death.
-- KEYS[1] jobs hash   KEYS[2] dead or cancelled zset   KEYS[3] state hash   KEYS[4] opts hash
-- ARGV[1] limit = most jobs on the page, 1 to 1000
-- ARGV[2] mode = 'jobs' (ids, times of death, records, state and options
--   entries) | 'ids' (no records)
-- ARGV[3] cursor time: time of death in ms of the previous page's last
--   examined job ('' = from the start)
-- ARGV[4] cursor id: that job's id ('' when ARGV[3] is '')
-- ARGV[5] until_ms: only jobs that died at or before it ('' = no bound,
--   'now' = the Redis clock of this call, returned as now_ms)
-- ARGV[6] max_bytes: the page ends before a record that would take the
--   records read (returned, or read for their error) past this many bytes;
--   it always holds at least one job. Ignored in mode 'ids' without an
--   error filter.
-- ARGV[7] after_ms: only jobs that died strictly after it ('' = no bound)
-- ARGV[8] before_ms: only jobs that died at or before it ('' = no bound;
--   with until_ms, the earlier of the two holds)
-- ARGV[9] error filter: only jobs whose last error holds this text, in
--   lower case, compared with the error in lower case (ASCII); '' = any; at
--   most 256 bytes. The error is the job's state entry's when it has one,
--   else its record header's (the record is read then, within max_bytes).
-- returns: {now_ms, more, cursor_ms, cursor_id, then per job: id, died_ms,
--   record, state, opts}, without record, state and opts in mode 'ids'.
--   state is the job's state entry, '' when it has none (it overrides the
--   record's attempts, max and last error: see record.lua); opts its
--   options entry, '' when it has none. more = 1 when the set may hold a
--   matching job after the cursor (within the bounds): (cursor_ms,
--   cursor_id) is the next page's cursor, the last job examined, which with
--   an error filter may be one that did not match; both are '' when more
--   is 0. record is nil when the job has none (the scripts never leave one
--   so).
-- The set is ordered by (score, member bytes). A page starts at the first
-- member strictly after the cursor in that order, whether or not the
-- cursor's own job is still in the set: a job dead all along is listed
-- exactly once, whatever leaves or joins between pages. Scores are whole ms,
-- as every script writes them.
-- bound: limit <= 1000; at most limit + 1 members examined, 250 with an
--   error filter (each decoded and matched: about 4 µs apiece); O(log N) calls to find the start (rank_after), then
--   O(log N + examined), plus the records within max_bytes

if #ARGV ~= 9 then return redis.error_reply('ERR courier: 9 arguments expected') end
if not KEYS[4] then return redis.error_reply('ERR courier: deadlist needs the opts key') end
local limit, mode, cscore, cid, until_s = tonumber(ARGV[1]), ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local max_bytes, after_s, before_s, needle = tonumber(ARGV[6]), ARGV[7], ARGV[8], ARGV[9]
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
for _, b in ipairs({after_s, before_s}) do
  if b ~= '' and (not string.match(b, '^%d+$') or #b > 15) then
    return redis.error_reply('ERR courier: after_ms and before_ms must be whole ms (at most 15 digits) or empty')
  end
end
if #needle > 256 then return redis.error_reply('ERR courier: the error filter is at most 256 bytes') end
if (mode == 'jobs' or needle ~= '') and (not max_bytes or not string.match(ARGV[6], '^%d+$') or max_bytes < 1) then
  return redis.error_reply('ERR courier: max_bytes must be positive')
end

local key = KEYS[2]
local start = 0
if cscore ~= '' then start = rank_after(key, cscore, cid) end
if after_s ~= '' then start = math.max(start, redis.call('ZCOUNT', key, '-inf', after_s)) end

local now = now_ms()
local hi = tonumber(until_s) -- nil = no bound
if until_s == 'now' then hi = now end
if before_s ~= '' and (not hi or tonumber(before_s) < hi) then hi = tonumber(before_s) end
-- One member beyond those examined tells whether there is more.
local scan = limit
if needle ~= '' then scan = 250 end -- about a millisecond of decoding and matching
local got = redis.call('ZRANGE', key, start, start + scan, 'WITHSCORES')
local states = redis.call('EXISTS', KEYS[3]) == 1
local st_all = {}
if needle ~= '' and states and #got > 0 then
  local all = {}
  for i = 1, #got, 2 do all[#all + 1] = got[i] end
  st_all = redis.call('HMGET', KEYS[3], unpack(all))
end
-- ids, scores: the matching jobs; recs: records read for their error.
local ids, scores, recs, more, bytes = {}, {}, {}, 0, 0
local cur_ms, cur_id = '', ''
local examined = 0
for i = 1, #got, 2 do
  local id, score = got[i], tonumber(got[i + 1])
  if hi and score > hi then break end
  if #ids == limit or examined == scan then
    more = 1
    break
  end
  local match = true
  if needle ~= '' then
    local st = st_all[(i + 1) / 2]
    local err = ''
    if st then
      local _, _, e = st_decode(st)
      err = e or ''
    else
      -- No state entry (see record.lua): the error is in the record's
      -- header, which is read whole.
      local n = redis.call('HSTRLEN', KEYS[1], id)
      if examined > 0 and bytes + n > max_bytes then
        more = 1
        break
      end
      bytes = bytes + n
      local rec = redis.call('HGET', KEYS[1], id)
      recs[id] = rec
      local h = rec and rec_decode(rec)
      if h then err = h.err end
    end
    match = string.find(string.lower(err), needle, 1, true) ~= nil
  end
  examined = examined + 1
  cur_ms, cur_id = ms_str(score), id
  if match then
    ids[#ids + 1] = id
    scores[#scores + 1] = score
  end
end
if more == 0 then cur_ms, cur_id = '', '' end

local out = {now, more, cur_ms, cur_id}
if mode == 'ids' then
  for i, id in ipairs(ids) do
    out[2 * i + 3] = id
    out[2 * i + 4] = scores[i]
  end
  return out
end
if #ids == 0 then return out end
-- Records can be large (a payload is up to 256 MiB): stop at max_bytes.
local n = 0
for i, id in ipairs(ids) do
  if not recs[id] then
    bytes = bytes + redis.call('HSTRLEN', KEYS[1], id)
    if i > 1 and bytes > max_bytes then
      out[2], out[3], out[4] = 1, ms_str(scores[i - 1]), ids[i - 1]
      break
    end
  end
  n = i
end
local rs = redis.call('HMGET', KEYS[1], unpack(ids, 1, n))
local st, os = {}, opts_of(KEYS[4], {unpack(ids, 1, n)}) or {}
if states then st = redis.call('HMGET', KEYS[3], unpack(ids, 1, n)) end
for i = 1, n do
  out[5 * i] = ids[i]
  out[5 * i + 1] = scores[i]
  out[5 * i + 2] = rs[i]
  out[5 * i + 3] = st[i] or ''
  out[5 * i + 4] = os[i] or ''
end
return out
