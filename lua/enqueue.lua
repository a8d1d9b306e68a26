-- enqueue.lua: add jobs to a queue; an id that exists is reported, never
-- overwritten, and so is a unique key that another job holds.
-- KEYS[1] jobs hash   KEYS[2] due zset (normal)   KEYS[3] state hash
-- KEYS[4] due:high zset   KEYS[5] due:low zset   KEYS[6] opts hash
-- KEYS[7] unique hash   KEYS[8] unique:exp zset   KEYS[9] settings hash
--   (the queue's record, queue_set.lua: id_retention, ms a caller-supplied
--   id stays refused after its job finished; retired; the layout, v)
-- KEYS[10] (optional; sent to a partition i >= 1) the same settings hash
-- KEYS[#KEYS - 6 ..] (sent only with keyed jobs, after KEYS[10] when it is
--   sent: 16 or 17 keys) the seven keys of job keys (keys.lua's kset)
-- ARGV[1] wake channel   ARGV[2] n = number of jobs   ARGV[3] k = number of
--   jobs with options
-- ARGV[4] the version of the queue's layout the caller routed by ('' = no
--   check: a call to partition 0 that is never refused). With a version, or
--   with KEYS[10], the call writes nothing and fails with
--   'ERR courier: partition retired' when the partition is retired (the
--   queue's partitions changed and this one takes no new job); with a
--   version, with 'ERR courier: layout <v>;<n>;<prev>' when the partition
--   holds a newer layout than the caller's (the caller routes again by it),
--   and with 'ERR courier: layout unknown' when a partition i >= 1 holds none
-- then 6 values per job: id, at_ms (absolute run-at, ms since epoch; -1 =
--   none), delay_ms (used when at_ms is -1), max_attempts (0 = queue
--   default), timeout_ms (0 = queue default), payload (bytes, may be empty)
-- then k pairs: the job's position (1..n, increasing) and its options,
--   "<level>;<since>;<for_ms>;<caller>;" .. unique_key (see options.lua's
--   opts; caller: '1' when the caller chose the id), or for a keyed job
--   "<level>;<since>;<for_ms>;<caller + 2>;<keylen>;" .. key .. unique_key
--   (caller '2' or '3'; key 1 to 256 bytes): the job waits among its key's
--   (keys.lua) instead of in a due zset. A job without a pair is
--   of the normal priority, has no unique key, and its id was generated: a
--   call of such jobs only (the common case) carries no options at all.
-- then h pairs (0 <= h <= n): the job's position (1..n, increasing) and its
--   headers section, "name=value\n" per header (store/headers.go; 1 to
--   16384 bytes, ending in a newline): the job's record is then a c4 record
--   with that section (see record.lua). A job without a pair has no headers.
-- returns: array of n values: 1 = enqueued, 0 = the id exists, or is
--   retained after its job finished (that job untouched; a later copy of an
--   id within the same call counts as existing), or a string: the unique key
--   is held, by the job of that id (nothing written for this job)
-- bound: n <= 1000; O(n log N) plus the payloads given; an existing record is
--   never read (HSETNX), whatever its size

local B = 4 -- the jobs' values start after ARGV[B]
local n = tonumber(ARGV[2])
if not n or n < 1 or n > 1000 then return redis.error_reply('ERR courier: 1 to 1000 jobs per call') end
local k = tonumber(ARGV[3])
if not k or k < 0 or k > n then return redis.error_reply('ERR courier: k must be 0 to n') end
local hbase = B + n * 6 + k * 2 -- where the header pairs start
if #ARGV < hbase or (#ARGV - hbase) % 2 ~= 0 or (#ARGV - hbase) / 2 > n then
  return redis.error_reply('ERR courier: 6 values per job, 2 per job with options and 2 per job with headers expected')
end
if not KEYS[9] then return redis.error_reply('ERR courier: enqueue needs the due levels, opts, unique and settings keys') end
local ks = nil -- the keys of job keys, when sent
if #KEYS >= 16 then ks = kset(#KEYS - 6) end
local checked = #KEYS == 10 or #KEYS == 17 -- a partition i >= 1: its retirement is checked
if not ARGV[4] or (ARGV[4] ~= '' and (not string.find(ARGV[4], '^%d+$') or #ARGV[4] > 16)) then
  return redis.error_reply('ERR courier: the layout version must be digits or empty')
end
-- one pattern match per job for the common case (every value well formed);
-- a job that fails it is checked field by field to name what is wrong
local find = string.find
for i = 0, n - 1 do
  local b = B + i * 6
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
-- the partition's settings, read once: retirement, layout, id retention
local st = redis.call('HMGET', KEYS[9], 'retired', 'v', 'id_retention')
local cv = tonumber(ARGV[4])
if st[1] and (checked or cv) then return redis.error_reply('ERR courier: partition retired') end
if cv then
  local pv = tonumber(st[2])
  if pv and pv > cv then
    local l = redis.call('HMGET', KEYS[9], 'partitions', 'partitions_prev')
    return redis.error_reply('ERR courier: layout ' .. st[2] .. ';' .. (l[1] or '1') .. ';' .. (l[2] or ''))
  end
  if not pv and checked and cv > 0 then return redis.error_reply('ERR courier: layout unknown') end
end
local opts, last = {}, 0 -- job position -> options
for j = 0, k - 1 do
  local at = B + n * 6 + j * 2
  local pos, o = tonumber(ARGV[at + 1]), ARGV[at + 2]
  if not pos or pos <= last or pos > n or pos % 1 ~= 0 then
    return redis.error_reply('ERR courier: option positions must increase within 1..n')
  end
  local level, _, w, c, rest = string.match(o, '^([hnl]);([ef%-]);(%d+);([0-3]);()')
  if not level or #w > 12 then
    return redis.error_reply('ERR courier: job ' .. pos .. ' options must be "<h|n|l>;<e|f|->;<for_ms>;<0-3>;[<keylen>;<key>]<unique key>"')
  end
  if c == '2' or c == '3' then
    local len = string.match(o, '^(%d+);', rest)
    if not len or #len > 3 or tonumber(len) < 1 or tonumber(len) > 256 or #o < rest + #len + tonumber(len) then
      return redis.error_reply('ERR courier: job ' .. pos .. ' key must be 1 to 256 bytes, given as "<keylen>;<key>"')
    end
    if not ks then return redis.error_reply('ERR courier: a keyed job needs the keys of job keys') end
  end
  opts[pos], last = o, pos
end
local hdrs = {} -- job position -> headers section
last = 0
for j = hbase + 1, #ARGV, 2 do
  local pos, h = tonumber(ARGV[j]), ARGV[j + 1]
  if not pos or pos <= last or pos > n or pos % 1 ~= 0 then
    return redis.error_reply('ERR courier: header positions must increase within 1..n')
  end
  if #h < 2 or #h > 16384 or string.byte(h, #h) ~= 10 then
    return redis.error_reply('ERR courier: job ' .. pos .. ' headers must be 2 to 16384 bytes ending in a newline')
  end
  hdrs[pos], last = h, pos
end

local now = now_ms()
local d = dues(KEYS[4], KEYS[2], KEYS[5])
local prev = heads_ms(d)
local added, out = {}, {}
local earliest = nil
local now_s = ms_str(now)
local enq = ';' .. now_s .. ';0;'

-- record builds the record of the job at ARGV[b + 1..] and position pos:
-- c4 with its headers section when it has one (record.lua)
local function record(b, pos)
  local h = hdrs[pos]
  if h then return 'c4;0;' .. ARGV[b + 4] .. ';' .. ARGV[b + 5] .. enq .. #h .. ';' .. h .. ARGV[b + 6] end
  return 'c3;0;' .. ARGV[b + 4] .. ';' .. ARGV[b + 5] .. enq .. ARGV[b + 6]
end

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

-- the queue's id retention, read only when a job has options
local retain = tonumber(st[3] or '0') or 0
-- A job whose only option is a caller's id has none that matters when the
-- queue retains no ids.
local plain = k == 0
if not plain and retain == 0 then
  plain = true
  for _, o in pairs(opts) do
    if o ~= CALLER_ONLY then
      plain = false
      break
    end
  end
end

if plain then
  -- The common case: every job of the normal level, without a unique key,
  -- and no id to retain.
  local zadd = {}
  for i = 0, n - 1 do
    local b = B + i * 6
    local id = ARGV[b + 1]
    -- HSETNX tests for the id without reading what is stored under it; a
    -- later copy of an id in this call finds the first one.
    out[i + 1] = redis.call('HSETNX', KEYS[1], id, record(b, i + 1))
    if out[i + 1] == 1 then
      -- the score as a string, formatted only when it must be computed
      -- (score_of, inline: this is the hot path)
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
    -- a state entry left behind under a reused id (see record.lua) is not
    -- this job's; an options entry is deleted with its job's record, so
    -- none can be left under an id that is free
    if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('HDEL', KEYS[3], unpack(added)) end
  end
  wake(ARGV[1], prev, earliest)
  return out
end

local zadd = {h = {}, n = {}, l = {}}
local os, uset, uexp = {}, {}, {}
-- The options of each job, parsed once; and the unique fields they ask
-- about (a unique key, or a caller's id that may be retained), read in one
-- call. held[f] is the id holding f now, or false; jobs of this call that
-- take a field update it, so a later copy of a key finds the first.
local lv, since, w, caller, kf, fields = {}, {}, {}, {}, {}, {}
local jkey = {} -- position -> the job's key, for a keyed job
for pos, o in pairs(opts) do
  local key
  lv[pos], since[pos], w[pos], caller[pos], key = string.match(o, '^([hnl]);([ef%-]);(%d+);([0-3]);(.*)$')
  if caller[pos] == '2' or caller[pos] == '3' then
    local len, at = string.match(key, '^(%d+);()')
    jkey[pos] = string.sub(key, at, at + tonumber(len) - 1)
    key = string.sub(key, at + tonumber(len))
    if caller[pos] == '2' then caller[pos] = '0' else caller[pos] = '1' end
  end
  if key ~= '' then
    kf[pos] = 'k:' .. key
    fields[#fields + 1] = kf[pos]
  end
  -- a caller's id is refused after its job only while the queue retains ids
  if caller[pos] == '1' and retain > 0 then fields[#fields + 1] = 'i:' .. ARGV[B + (pos - 1) * 6 + 1] end
end
local held = {}
if #fields > 0 and redis.call('EXISTS', KEYS[7]) == 1 then
  local es = redis.call('HMGET', KEYS[7], unpack(fields))
  for j, f in ipairs(fields) do held[f] = uniq_holder(KEYS[1], es[j], now) or false end
end
local reused = {} -- added jobs whose id the caller chose: an old entry may be left under it
local retain_s = ms_str(retain)
local kj = {} -- the keyed jobs added: {id, key, level, run-at}
for i = 0, n - 1 do
  local b = B + i * 6
  local pos = i + 1
  local id, o, f = ARGV[b + 1], opts[pos], kf[pos]
  if f and held[f] then
    out[pos] = held[f]
  elseif caller[pos] == '1' and held['i:' .. id] then
    out[pos] = 0 -- a retained id: its job finished within the retention
  else
    -- HSETNX tests for the id without reading what is stored under it; a
    -- later copy of an id in this call finds the first one.
    out[pos] = redis.call('HSETNX', KEYS[1], id, record(b, pos))
  end
  if out[pos] == 1 then
    local score, score_s = score_of(b)
    added[#added + 1] = id
    if jkey[pos] then
      kj[#kj + 1] = {id, jkey[pos], lv[pos], score}
      -- the stored entry: the level in upper case, then the key (options.lua's opt_decode)
      local r = '0'
      if caller[pos] == '1' then
        reused[#reused + 1] = id
        r = retain_s
      end
      os[#os + 1] = id
      os[#os + 1] = string.upper(lv[pos]) .. ';' .. since[pos] .. ';' .. w[pos] .. ';' .. r .. ';' .. #jkey[pos] .. ';' .. jkey[pos] .. string.sub(f or 'k:', 3)
    else
      local z = zadd[lv[pos] or 'n']
      z[#z + 1] = score_s
      z[#z + 1] = id
      if earliest == nil or score < earliest then earliest = score end
    end
    if o and not jkey[pos] then
      -- the entry is the options as given, but for the retention of a
      -- caller's id in place of its flag
      if caller[pos] == '1' then
        reused[#reused + 1] = id
        if lv[pos] ~= 'n' or f or retain > 0 then
          os[#os + 1] = id
          os[#os + 1] = lv[pos] .. ';' .. since[pos] .. ';' .. w[pos] .. ';' .. retain_s .. ';' .. string.sub(o, #lv[pos] + #since[pos] + #w[pos] + 6)
        end
      else
        os[#os + 1] = id
        os[#os + 1] = o
      end
    end
    if f then
      held[f] = id
      local untl = '0'
      if since[pos] == 'e' and w[pos] ~= '0' then
        untl = ms_str(now + tonumber(w[pos]))
        uexp[#uexp + 1] = untl
        uexp[#uexp + 1] = f
      end
      uset[#uset + 1] = f
      uset[#uset + 1] = '1;' .. untl .. ';' .. id
    end
  end
end
if #added > 0 then
  zadd_levels(d, zadd)
  -- a state or options entry left behind under a reused id (see record.lua) is not this job's
  if redis.call('EXISTS', KEYS[3]) == 1 then redis.call('HDEL', KEYS[3], unpack(added)) end
  if #reused > 0 then redis.call('HDEL', KEYS[6], unpack(reused)) end
  if #os > 0 then redis.call('HSET', KEYS[6], unpack(os)) end
  -- the unique fields taken (uniq_set's layout), one write for the call
  if #uset > 0 then redis.call('HSET', KEYS[7], unpack(uset)) end
  if #uexp > 0 then redis.call('ZADD', KEYS[8], unpack(uexp)) end
  -- keyed jobs wait among their key's, and their keys are placed for claims
  local t = ks and kput(ks, kj, now)
  if t and (earliest == nil or t < earliest) then earliest = t end
end
wake(ARGV[1], prev, earliest)
return out
