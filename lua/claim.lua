-- claim.lua: move up to n due jobs to active with a lease and a fresh claim
-- token, within the queue's rate limit when it has one.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] claims hash   KEYS[6] state hash   KEYS[7] rate zset (touched only
--   with a rate limit)   KEYS[8] paused string (queue_set.lua)
-- KEYS[9] due:high zset   KEYS[10] due:low zset (the other priority levels;
--   KEYS[2] is the normal one)   KEYS[11] opts hash   KEYS[12] unique hash
--   KEYS[13] unique:exp zset (read only when a corrupt record goes to dead:
--   it has finished, so its unique key is released)
-- KEYS[14] history hash   KEYS[15] history:minutes zset (record.lua's
--   history_add): each claimed job's lag (now - the run-at it was due at)
--   is counted in its lag bucket, and each corrupt record as died
-- KEYS[16] (optional) settings hash: its field share ("<i>;<m>", written
--   with the queue's layout by queue_set.lua and queue_copy.lua) says this
--   is partition i of the m a limit is shared by, share_next the same in a
--   layout being written, share_was the shares it had within the last
--   window (record.lua's share_set); read only with a limit
-- KEYS[17..23] (optional) the seven keys of job keys (keys.lua's kset):
--   with them, the due jobs of keys are claimed too, key by key in
--   proportion to their weights (kclaim), each key at most up to its cap;
--   the queue's unkeyed jobs take a key's share of the call while keys have
--   jobs due, and whatever the keys leave
-- ARGV[1] n = max jobs to claim (the caller's free slots)   ARGV[2] lease_ms
-- ARGV[3] rate_n   ARGV[4] rate_ms: at most rate_n jobs of the queue are
--   claimed, by all callers together, in any window of rate_ms; absent, ""
--   or "0" (both) = no limit. With KEYS[16] and a share, rate_n is the whole
--   queue's limit and this partition takes its share of it
-- ARGV[5] the queue's priority weights "<high>,<normal>,<low>" (integers
--   0..1000, not all 0), or '' = strict: due jobs of a higher level are
--   always taken first. With weights, each job of the call goes to a level
--   that has one due, chosen in proportion to the weights of those levels
--   (spread by the clock's µs), and a level with too few due jobs leaves
--   its share to the others, highest first: a lower level gets its share
--   while higher ones have a backlog.
-- ARGV[6] the claiming process's id (absent or '' = not recorded), at most
--   256 bytes, without '@' or newline: stored with each job's claim token as
--   "<token>@<process>" (see record.lua), so Get and List can tell who runs
--   a job
-- ARGV[7] the default cap of a job key: at most this many jobs of one key
--   run at once, across the queue's processes (absent, '' or '0' = none;
--   1 to 1000000); a key's kconf override replaces it
-- ARGV[8] the default rate limit of a job key, "<n>;<ms>": at most n jobs of
--   one key start in any window of ms, across the queue's processes
--   (rate.lua's window, per key); absent or '' = none; a key's kconf
--   override replaces it
-- ARGV[9] '1' when the caller takes turns over the queue's partitions by
--   their weights (a partition of a split queue): the weight returned is
--   then read as below; absent or '' = it is 1, whatever the keys
-- returns: {now_us, next_ms, corrupt, weight, id1, runat1_ms, claim1, rec1, state1, id2, ...}
--   now_us: Redis clock in µs; next_ms: run-at of the earliest job still due
--   (-1 = none); -2 = the queue is paused (KEYS[8] exists): no job was
--   read or moved, nothing was written, corrupt is 0 and no job follows;
--   or, negated (< -2), the time in ms at which the rate window next frees
--   capacity, when the limit is used up and a job is due by then: a claim
--   before that time takes nothing. corrupt: records that are not records
--   (or whose header does not decode) and went to dead, wrapped
--   (rec_corrupt). weight: the partition's share in the turns its
--   process's claims take over the queue's partitions (the pool's slots):
--   1 without job keys or ARGV[9]; with them, the weights of its ready keys
--   summed (kweight), plus 1 while unkeyed jobs are due, at least 1. Then per
--   claimed job: its id, the run-at it was due at
--   (a decimal string), its claim token (the same for every job of one
--   call), its record, unchanged, and its state entry ('' when it has
--   none), which overrides the record's attempts, max and last error (see
--   record.lua; the running attempt is attempts + 1). The run-at of a job
--   of the high or low priority level carries its level's letter in front
--   ('h' or 'l', then the ms), so a queue without levels pays nothing for
--   them; a keyed job's ends in a space and its key. Within one call the
--   jobs come level by level, each level by run-at. A record whose header
--   is not the fresh default gets its state entry here when it has none.
-- bound: n <= 1000; O(1) when paused, else O(levels + n log N) plus the bytes of
--   the records returned; with job keys, plus kclaim's O(KPROMOTE log K +
--   (n + 8) log N): at most n + 8 keys visited and 100 keys woken per call,
--   whatever the number of keys K (idle keys are in none of the sets read),
--   and O(KWEIGH) for the weight when a key has a weight of its own;
--   with a rate limit, plus O(log E + 1000) for the
--   E <= rate_n entries of the rate zset (never a scan of the window).
--
-- The rate zset is a window of rate.lua's: one entry per claim call that
-- took jobs, read from its two ends.

local n, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
if not n or n < 1 or n > 1000 then return redis.error_reply('ERR courier: claim 1 to 1000 jobs per call') end
if not lease or lease < 1 then return redis.error_reply('ERR courier: lease_ms must be positive') end

local rate_n, rate_ms = rate_args(ARGV[3], ARGV[4])
if not rate_n then return redis.error_reply('ERR courier: ' .. rate_ms) end
if rate_n > 0 and not KEYS[7] then return redis.error_reply('ERR courier: a rate limit needs the rate key') end

if not KEYS[8] then return redis.error_reply('ERR courier: claim needs the paused key (KEYS[8])') end
if not KEYS[15] then return redis.error_reply('ERR courier: claim needs the due:high, due:low, opts, unique and history keys (KEYS[9] to KEYS[15])') end
local weights = nil
if (ARGV[5] or '') ~= '' then
  local wh, wn, wl = string.match(ARGV[5], '^(%d+),(%d+),(%d+)$')
  if not wh or #wh > 4 or #wn > 4 or #wl > 4 then
    return redis.error_reply('ERR courier: weights must be "<high>,<normal>,<low>"')
  end
  weights = {h = tonumber(wh), n = tonumber(wn), l = tonumber(wl)}
  if weights.h > 1000 or weights.n > 1000 or weights.l > 1000 or weights.h + weights.n + weights.l == 0 then
    return redis.error_reply('ERR courier: weights must be 0 to 1000 each, not all 0')
  end
end

local ks, kcap, krate_default = nil, 0, nil -- the keys of job keys, a key's default cap and rate
if KEYS[23] then
  ks = kset(17)
  local c = ARGV[7] or ''
  if c ~= '' then
    if not string.match(c, '^%d+$') or #c > 7 or tonumber(c) > 1000000 then
      return redis.error_reply('ERR courier: the key cap must be 0 to 1000000')
    end
    kcap = tonumber(c)
  end
  if (ARGV[8] or '') ~= '' then
    local a, b = string.match(ARGV[8], '^(%d*);(%d*)$')
    local rn, rms = rate_args(a, b)
    if not a or not rn then return redis.error_reply('ERR courier: the key rate must be "<n>;<ms>": ' .. (rms or 'n and ms')) end
    if rn > 0 then krate_default = {rn, rms} end
  end
end

local proc = ARGV[6] or ''
if #proc > 256 or string.find(proc, '[@\n]') then
  return redis.error_reply("ERR courier: the process id must be at most 256 bytes, without '@' or newline")
end

local now, now_us = now_ms()
-- A paused queue hands out nothing, checked before any write. One EXISTS
-- tells a running queue without priority levels (the common case) from
-- the rest, which pay for a second.
local leveled, keyed = false, false
local exists = redis.call('EXISTS', KEYS[8], KEYS[9], KEYS[10], ks and ks.ready or KEYS[8], ks and ks.wait or KEYS[8])
if exists > 0 then
  if redis.call('EXISTS', KEYS[8]) == 1 then return {now_us, -2, 0, 1} end
  leveled = redis.call('EXISTS', KEYS[9], KEYS[10]) > 0
  keyed = ks ~= nil and (not leveled or redis.call('EXISTS', ks.ready, ks.wait) > 0)
end
local out = {now_us, -1, 0, 1}

-- The rate window: how many jobs this call may take, read before any write.
local take = n
local rate_first, rate_cum, rate_last -- oldest entry's score (µs), newest cumulative and score
local grow_at -- ms: when the earliest of the shares capping this one stops (below)
if rate_n > 0 then
  -- A partition of a split queue claims its share of the queue's limit,
  -- as the queue's record says (queue_copy.lua): partition i of m takes
  -- rate_n / m, the first rate_n % m one more, at least 1. The smallest
  -- of its shares applies: share, share_next (its share in a layout being
  -- written) and those of share_was that stopped applying less than a
  -- window ago (record.lua's share_set): a share shrinks at once and
  -- grows a window late, so two layouts never claim more than the limit
  -- together.
  if KEYS[16] then
    local total = rate_n
    local function cap(i, m)
      i, m = tonumber(i), tonumber(m)
      if m == 0 then
        rate_n = 0 -- "0;0": none (a partition just added)
      elseif m and m > 1 then
        local share = math.floor(total / m)
        if i < total % m then share = share + 1 end
        rate_n = math.min(rate_n, math.max(share, 1))
      end
    end
    local f = redis.call('HMGET', KEYS[16], 'share', 'share_next', 'share_was')
    cap(string.match(f[1] or '', '^(%d+);(%d+)$'))
    cap(string.match(f[2] or '', '^(%d+);(%d+)$'))
    for i, m, at in string.gmatch(f[3] or '', '(%d+);(%d+);(%d+)') do
      local ends = tonumber(at) + rate_ms
      if now < ends then
        cap(i, m)
        grow_at = math.min(grow_at or ends, ends)
      end
    end
  end
  local used
  used, rate_cum, rate_first, rate_last = rate_read(KEYS[7], now_us, rate_ms)
  if not used then return redis.error_reply('ERR courier: the rate key holds an entry that is not a rate entry') end
  take = math.max(math.min(n, rate_n - used), 0)
  rate_n = rate_n - used -- from here on: the capacity left
end

local claimed = 0
local lags -- lags[b]: the claimed jobs of lag bucket b, for the history
local due, levels = {}, nil -- levels[i]: the level of the i-th job of due; nil = all normal
local d = dues(KEYS[9], KEYS[2], KEYS[10])
-- Keyed jobs first, leaving the unkeyed ones a key's share of the call
-- while they have a job due (and what the keys leave, below).
local kdue, klv, kof, kready = nil, nil, nil, nil -- kready: the keys still ready, when kclaim ran
if keyed and take > 0 then
  local keep = 0
  local uh
  if leveled then uh = heads_ms(d) else uh = head_ms(KEYS[2]) end
  if uh and uh <= now then
    -- a key's share: take / (keys ready + 1), its fraction by the clock's
    -- µs, so that claims of one job (a concurrency of 1) share too
    local share = take / (redis.call('ZCARD', ks.ready) + 1)
    keep = math.floor(share)
    if (now_us % 1000) / 1000 < share - keep then keep = keep + 1 end
  end
  if take - keep > 0 then
    kdue, klv, kof, kready = kclaim(ks, take - keep, now, now_us, kcap, krate_default)
    take = take - #kdue / 2
  end
end
if take > 0 and not leveled then
  due = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'WITHSCORES', 'LIMIT', 0, take)
elseif take > 0 then
  due, levels = take_levels(d, now, take, weights, now_us)
end
local nu = #due / 2 -- the unkeyed jobs, before the keyed ones
if kdue and #kdue > 0 then
  levels = levels or {}
  for i = 1, nu do levels[i] = levels[i] or 'n' end
  for i = 1, #kdue do due[#due + 1] = kdue[i] end
  for i = 1, #klv do levels[nu + i] = klv[i] end
end
if #due > 0 then
  local ids = {}
  for i = 1, #due, 2 do ids[(i + 1) / 2] = due[i] end
  local recs = redis.call('HMGET', KEYS[1], unpack(ids))
  -- good: indexes (into ids) of the jobs to claim, ng of them; heads: the
  -- decoded header of those whose header is not the fresh default (nil
  -- while there is none, so a queue of fresh records takes the fast path).
  local good, heads, dead, ng, bad = {}, nil, {}, 0, nil
  for i = 1, #ids do
    local s = recs[i]
    if s then
      -- Is it a record ('c3;', or 'c4;' with headers), and does its header
      -- begin as enqueue writes it ('c3;0;0;': no attempt spent, the
      -- queue's max), needing no state entry? Read from the first seven
      -- bytes, inline: this is the hot path.
      local c, v, s1, a, s2, m, s3 = string.byte(s, 1, 7)
      local ok = c == 99 and (v == 51 or v == 52) and s1 == 59 -- 'c3;' or 'c4;'
      if ok and not (a == 48 and s2 == 59 and m == 48 and s3 == 59) then -- not '0;0;'
        -- A header other than the fresh default is decoded (it may go to
        -- the job's state entry, below); one that does not decode is corrupt.
        local h = rec_decode(s)
        if h then
          heads = heads or {}
          heads[ng + 1] = h
        else
          ok = false
        end
      end
      if ok then
        ng = ng + 1
        good[ng] = i
      else
        local id = ids[i]
        bad = bad or {}
        bad[i] = true
        redis.call('HSET', KEYS[1], id, rec_corrupt(s, now))
        dead[#dead + 1] = now
        dead[#dead + 1] = id
        out[3] = out[3] + 1
      end
    end
    -- an id with no record is dropped from due: there is nothing to run
  end
  -- the keyed jobs left kdue in kclaim; one whose record is gone or
  -- corrupt gives its slot back
  local kgone = nil
  for i = nu + 1, #ids do
    if not recs[i] or (bad and bad[i]) then
      kgone = kgone or {}
      kgone[kof[i - nu]] = (kgone[kof[i - nu]] or 0) + 1
    end
  end
  if kgone then kfree(ks, kgone, now) end
  if nu == 0 then
    -- no unkeyed job
  elseif not levels then
    redis.call('ZREM', KEYS[2], unpack(ids))
  else
    local by = {h = {}, n = {}, l = {}}
    for i = 1, nu do
      local b = by[levels[i]]
      b[#b + 1] = ids[i]
    end
    for level, b in pairs(by) do
      if #b > 0 then redis.call('ZREM', d[level], unpack(b)) end
    end
  end
  -- The state hash exists once a job of the queue failed, or was claimed
  -- with its own max attempts: other queues never read it.
  local states = redis.call('EXISTS', KEYS[6]) == 1
  if #dead > 0 then
    local gone = {}
    for i = 2, #dead, 2 do gone[#gone + 1] = dead[i] end
    -- the corrupt record's header is the whole truth now
    if states then redis.call('HDEL', KEYS[6], unpack(gone)) end
    -- a dead job has finished: its unique key is released
    finished(KEYS[12], KEYS[13], gone, opts_of(KEYS[11], gone), now)
  end
  if ng > 0 then
    pin(KEYS[3], KEYS[5])
    local tok = next_token(KEYS[5], now_us)
    local tok_s, deadline = ms_str(tok), ms_str(now + lease)
    local val = tok_s -- each job's claims value
    if proc ~= '' then val = tok_s .. '@' .. proc end
    local st = nil
    if states then
      local gids = {}
      for k = 1, ng do gids[k] = ids[good[k]] end
      st = redis.call('HMGET', KEYS[6], unpack(gids))
    end
    local active, claims, migrate, o = {}, {'', tok_s}, {}, #out
    for k = 1, ng do
      local i = good[k]
      local id = ids[i]
      active[2 * k - 1] = deadline
      active[2 * k] = id
      claims[2 * k + 1] = id
      claims[2 * k + 2] = val
      local state = ''
      if st then state = st[k] or '' end
      local h = heads and heads[k]
      if h and state == '' then
        -- A job with its own max, or a record of an older version: its
        -- header goes to the state entry, where recover and retry look.
        state = st_encode(h.attempts, h.max, h.err)
        migrate[#migrate + 1] = id
        migrate[#migrate + 1] = state
      end
      out[o + 1] = id
      local lv = levels and levels[i] or 'n'
      if lv == 'n' then out[o + 2] = due[i * 2] else out[o + 2] = lv .. due[i * 2] end
      if i > nu then out[o + 2] = out[o + 2] .. ' ' .. kof[i - nu] end -- a keyed job's key
      out[o + 3] = tok
      out[o + 4] = recs[i]
      out[o + 5] = state
      o = o + 5
    end
    redis.call('ZADD', KEYS[3], unpack(active))
    redis.call('HSET', KEYS[5], unpack(claims))
    if #migrate > 0 then redis.call('HSET', KEYS[6], unpack(migrate)) end
    claimed, lags = ng, {}
    -- Each job's lag (now - its run-at), counted by bucket for the history.
    -- The jobs of a level come by run-at, their lags falling, so a bucket's
    -- jobs are found by bisection: a few run-ats read per bucket, not one
    -- per job.
    local function count_lags(from, to)
      while from <= to do
        local b, lo = lag_bucket(now - tonumber(due[good[from] * 2]))
        local l, h = from, to -- the last job still above lo: in bucket b
        while l < h do
          local mid = math.floor((l + h + 1) / 2)
          if now - tonumber(due[good[mid] * 2]) > lo then l = mid else h = mid - 1 end
        end
        lags[b] = (lags[b] or 0) + l - from + 1
        from = l + 1
      end
    end
    if not levels then
      count_lags(1, ng)
    else -- level by level; keyed jobs one by one (they come key by key)
      local from = 1
      for k = 1, ng do
        if good[k] > nu then
          count_lags(k, k)
          from = k + 1
        elseif k == ng or levels[good[k]] ~= levels[good[k + 1]] or good[k + 1] > nu then
          count_lags(from, k)
          from = k + 1
        end
      end
    end
  end
  if #dead > 0 then redis.call('ZADD', KEYS[4], unpack(dead)) end
end
local nxt
if leveled then nxt = heads_ms(d) else nxt = head_ms(KEYS[2]) end
if keyed then
  -- the partition's weight: its ready keys' and, while unkeyed jobs are
  -- due, one more (they share as a key does)
  kready = kready or redis.call('ZCARD', ks.ready)
  if ARGV[9] == '1' then
    local w = kweight(ks, kready, redis.call('EXISTS', ks.conf) == 1)
    if nxt and nxt <= now then w = w + 1 end
    out[4] = math.max(math.floor(w + 0.5), 1)
  end
  local kn = knext(ks, kready > 0, now)
  if kn and (not nxt or kn < nxt) then nxt = kn end
end
if nxt then out[2] = nxt end

if claimed > 0 and rate_ms > 0 then
  local score = rate_note(KEYS[7], now_us, rate_ms, rate_cum, rate_last, claimed)
  rate_first = rate_first or score
end
if rate_ms > 0 and rate_n - claimed <= 0 and nxt then
  -- The oldest entry leaves the window, freeing capacity, once the clock
  -- passes its score + rate_ms; a share capped by an older one grows when
  -- that one stops: whichever comes first.
  local free = grow_at
  if rate_first then free = math.min(free or math.huge, math.ceil(rate_first / 1000) + rate_ms) end
  if free and nxt <= free then out[2] = -free end
end
-- The history, after the work (it never fails the claim).
if claimed > 0 then
  for b = 0, LAG_BUCKETS - 1 do
    if lags[b] then history_add(KEYS[14], KEYS[15], now, 'l' .. b, lags[b]) end
  end
end
if out[3] > 0 then history_add(KEYS[14], KEYS[15], now, 'd', out[3]) end
return out
