-- keys.lua: the helpers of job keys (per-key caps and fair share), which
-- scripts share as they share record.lua's. Not a script of its own: the
-- script layer ships each script with the definitions it names (see doc.go).
--
-- A job may belong to a key (a tenant, a customer, a resource: JobSpec.Key).
-- A keyed job waits in the partition its key routes to, never in the due
-- zsets: claims take jobs key by key, in proportion to the keys' weights, and
-- never run more jobs of a key at once than its cap. A queue without keyed
-- jobs has none of the keys below, and the scripts pay one EXISTS for them
-- at most. The seven keys of a partition, passed together in KEYS in this
-- order (kset):
--   kids       zset: id → run-at (ms) of every keyed job that waits, due or
--              not: what "due" is for an unkeyed job, so get, list, stats,
--              cancel and purge find keyed jobs there.
--   kdue       zset, every score 0: one member per waiting keyed job,
--              "<key>\0<level><run-at>\0<id>" (kmember): level 'a' (high),
--              'b' (normal), 'c' (low), run-at in ms, 13 digits. A key's
--              waiting jobs are one range of it, by level, then run-at:
--              a claim reads a key's due jobs with one ZRANGEBYLEX per level.
--   kready     zset: key → pass. The keys whose next job is due and which
--              may start one (below their cap, not limited): claims take the
--              key of the lowest pass first, and move it on by 1000 / its
--              weight per job started (stride scheduling), so keys share
--              the starts in proportion to their weights.
--   kwait      zset: key → ms. Keys whose next job is due later, or which
--              are limited until then (back-pressure, a rate limit): claims
--              move those that are due to kready, at most KPROMOTE per call.
--   kstate     hash: "r:"..key → jobs of the key running (slots held);
--              "p:"..key → its pass while the key is parked: it has waiting
--              jobs but runs at its cap, so it is in neither kready nor
--              kwait, and the release of a slot (kfree) places it again,
--              at that pass unless vt has passed it;
--              "u:"..key → ms until which the key is limited; "vt" → the
--              highest pass a claim served (it never goes back; a key that
--              becomes ready starts just before it, kvt); "lv" → '1' once
--              a keyed job of a level other than normal was enqueued
--              (claims then read three levels).
--   kcount     zset: key → its waiting jobs (due or not): the keys with the
--              most backlog, and every key that has waiting jobs.
--   kconf      hash: per-key overrides, "c:"..key → cap (0 = none),
--              "w:"..key → weight (1 to 1000; default 1), "r:"..key → rate
--              limit "<n>;<ms>" ("0;0" = none).
-- and one key per key with a rate limit, not in KEYS (it is named after
-- kstate: krate(ks, key) = "<prefix>:{<partition>}:k:rate:" .. key, in the
-- same slot): the key's window of rate.lua, which expires a window after
-- its last start, so a key whose limit is idle keeps nothing. (A script
-- touching a key it does not declare runs on a Cluster while the key is in
-- its slot; while the slot migrates, such a window may read as empty, and
-- the key start more than its limit for one window.)
-- Invariants: a waiting keyed job is in kids and kdue, and its key has an
-- entry in kcount; a key with waiting jobs is in kready, in kwait or parked
-- (a key may also sit in kready or kwait with none left: the next claim
-- that meets it drops it); "r:"..key counts the key's jobs in active, so a
-- slot is held exactly as long as its job's lease: every script that takes
-- a keyed job out of active calls kfree.

-- KLEVEL maps a priority level to its letter in a kdue member.
KLEVEL = {h = 'a', n = 'b', l = 'c'}

-- KPROMOTE bounds the keys a claim moves from kwait to kready.
KPROMOTE = 100

-- KSTRIDE is a key's pass step per job started, at weight 1.
KSTRIDE = 1000

-- KQUANTUM is the fewest jobs a visit takes of a key with that many due,
-- per unit of its weight (kclaim): a visit's reads and writes are shared
-- by its jobs, so a claim over many keys costs not much more per job than
-- one over few. Keys still share the starts by weight: over a round of
-- the ready keys each gets its quantum times its weight.
KQUANTUM = 8

-- KROUNDS bounds the rounds of one claim (kclaim).
KROUNDS = 4

-- kset returns the seven key names of job keys from KEYS[i] on (see the
-- header).
function kset(i)
  return {ids = KEYS[i], due = KEYS[i + 1], ready = KEYS[i + 2], wait = KEYS[i + 3],
    state = KEYS[i + 4], count = KEYS[i + 5], conf = KEYS[i + 6]}
end

-- kmember returns the kdue member of job id of key, level lv ('h', 'n' or
-- 'l') and run-at at (ms, a number).
function kmember(key, lv, at, id)
  return key .. '\0' .. KLEVEL[lv] .. string.format('%013d', at) .. '\0' .. id
end

-- kpad formats ms as kmember does.
function kpad(ms)
  return string.format('%013d', ms)
end

-- khead returns the earliest run-at (ms) of key's waiting jobs, or nil when
-- it has none; with levels (kstate's "lv"), the earliest of the three.
function khead(ks, key, levels)
  local best = nil
  local lvs = {'b'}
  if levels then lvs = {'a', 'b', 'c'} end
  for _, l in ipairs(lvs) do
    local m = redis.call('ZRANGEBYLEX', ks.due, '[' .. key .. '\0' .. l, '(' .. key .. '\0' .. l .. '~', 'LIMIT', 0, 1)[1]
    if m then
      local at = tonumber(string.sub(m, #key + 3, #key + 15))
      if not best or at < best then best = at end
    end
  end
  return best
end

-- krate returns the name of key's rate window (see the header).
function krate(ks, key)
  return string.sub(ks.state, 1, -6) .. 'rate:' .. key
end

-- kvt returns the pass a key that becomes ready starts at: just before the
-- highest pass a claim served (vt), so it is served before the keys that
-- are due for their next turn, whose passes tie at vt or beyond, whatever
-- its name (a sorted set orders equal scores by member). A key that waited
-- (new, woken, or released from its cap) thus starts its next job within
-- a claim or two instead of a round of every ready key; it gets no more
-- than that one turn ahead, since its pass then moves on as every key's.
function kvt(ks)
  return string.format('%.17g', (tonumber(redis.call('HGET', ks.state, 'vt') or '0') or 0) - 1)
end

-- kplace puts key, whose earliest waiting job runs at at (ms), where a
-- claim finds it, as kplace_all does; nothing when it is parked (kfree
-- places it). It returns the time (ms) from which the key may start a
-- job, or nil when it was left as it was.
function kplace(ks, key, at, now)
  local st = redis.call('HMGET', ks.state, 'p:' .. key, 'u:' .. key)
  if st[1] then return nil end
  return kplace_all(ks, {key}, {[key] = at}, {[key] = tonumber(st[2] or '')}, nil, now)
end

-- kplace_all puts keys, none of them parked, where a claim finds them, in
-- a few calls whatever their number: at[key] is the run-at (ms) of the
-- key's earliest waiting job, u[key] the time until which it is limited
-- (ms, or nil). A key whose job and limit have passed goes to kready,
-- unless it is there: at vt (kvt), or at pass[key] when given and later
-- (the pass of a key released from its cap, which is owed no turn for the
-- time it ran at its cap); another to kwait at the later of the two,
-- unless it is ready or waits there for an earlier time. A key it makes
-- ready may stay in kwait too: a claim that visits it places it again,
-- and kwait's promotion adds with NX, so the entry there changes nothing.
-- It returns the earliest time (ms) from which a key it placed may start
-- a job, or nil.
function kplace_all(ks, keys, at, u, pass, now)
  local ready, later, lat = {}, {}, {}
  for _, key in ipairs(keys) do
    local t = at[key]
    if u[key] and u[key] > t then t = u[key] end
    if t <= now then
      ready[#ready + 1] = key
    else
      later[#later + 1] = key
      lat[#later] = t
    end
  end
  local first = nil
  if #ready > 0 then
    local vt, z = tonumber(kvt(ks)), {}
    for i, key in ipairs(ready) do
      local p = vt
      if pass and pass[key] and pass[key] > vt then p = pass[key] end
      z[2 * i - 1] = string.format('%.17g', p)
      z[2 * i] = key
    end
    if redis.call('ZADD', ks.ready, 'NX', unpack(z)) > 0 then first = now end
  end
  if #later > 0 then
    local r = redis.call('ZMSCORE', ks.ready, unpack(later))
    local was = redis.call('ZMSCORE', ks.wait, unpack(later))
    local z = {}
    for i, key in ipairs(later) do
      local w = tonumber(was[i] or '')
      if not r[i] and not (w and w <= lat[i]) then
        z[#z + 1] = ms_str(lat[i])
        z[#z + 1] = key
        if not first or lat[i] < first then first = lat[i] end
      end
    end
    if #z > 0 then redis.call('ZADD', ks.wait, unpack(z)) end
  end
  return first
end

-- kput adds the keyed jobs js (a list of {id, key, level, run-at ms}) to
-- the waiting ones and places their keys (kplace_all; a parked key stays
-- parked), in a few calls whatever their number. It returns the earliest
-- time (ms) from which a key it placed may start a job, or nil.
function kput(ks, js, now)
  if #js == 0 then return nil end
  local ids, due, per, earliest, keys, lv = {}, {}, {}, {}, {}, false
  for i, j in ipairs(js) do
    local id, key, l, at = j[1], j[2], j[3], j[4]
    ids[2 * i - 1] = ms_str(at)
    ids[2 * i] = id
    due[2 * i - 1] = '0'
    due[2 * i] = kmember(key, l, at, id)
    if not per[key] then keys[#keys + 1] = key end
    per[key] = (per[key] or 0) + 1
    if not earliest[key] or at < earliest[key] then earliest[key] = at end
    if l ~= 'n' then lv = true end
  end
  redis.call('ZADD', ks.ids, unpack(ids))
  redis.call('ZADD', ks.due, unpack(due))
  if lv then redis.call('HSET', ks.state, 'lv', '1') end
  -- the keys' counts: one read, one write
  local counts, cs, fields = redis.call('ZMSCORE', ks.count, unpack(keys)), {}, {}
  for i, key in ipairs(keys) do
    cs[2 * i - 1] = ms_str((tonumber(counts[i] or '0') or 0) + per[key])
    cs[2 * i] = key
    fields[2 * i - 1] = 'p:' .. key
    fields[2 * i] = 'u:' .. key
  end
  redis.call('ZADD', ks.count, unpack(cs))
  local st = redis.call('HMGET', ks.state, unpack(fields))
  local free, u = {}, {}
  for i, key in ipairs(keys) do
    if not st[2 * i - 1] then
      free[#free + 1] = key
      u[key] = tonumber(st[2 * i] or '')
    end
  end
  return kplace_all(ks, free, earliest, u, nil, now)
end

-- kdrop removes waiting keyed jobs from kids, kdue and kcount: js is a list
-- of {id, key, level}; each job's run-at is read from kids. It returns the
-- number removed (a job no longer waiting is skipped).
function kdrop(ks, js)
  if #js == 0 then return 0 end
  local ids = {}
  for i, j in ipairs(js) do ids[i] = j[1] end
  local ats = redis.call('ZMSCORE', ks.ids, unpack(ids))
  local gone, members, per = {}, {}, {}
  for i, j in ipairs(js) do
    if ats[i] then
      gone[#gone + 1] = j[1]
      members[#members + 1] = kmember(j[2], j[3], tonumber(ats[i]), j[1])
      per[j[2]] = (per[j[2]] or 0) + 1
    end
  end
  if #gone == 0 then return 0 end
  redis.call('ZREM', ks.ids, unpack(gone))
  redis.call('ZREM', ks.due, unpack(members))
  for key, k in pairs(per) do kcount_add(ks, key, -k) end
  return #gone
end

-- kcount_add adds k (maybe negative) to key's waiting jobs in kcount, and
-- drops the entry at 0. It returns the jobs left.
function kcount_add(ks, key, k)
  local left = tonumber(redis.call('ZINCRBY', ks.count, k, key))
  if left <= 0 then redis.call('ZREM', ks.count, key) end
  return left
end

-- kfree releases the slots of keyed jobs that left active: per maps a key
-- to its number of such jobs. A parked key is placed again (kplace_all),
-- at its own pass unless vt has passed it. It returns the earliest time
-- (ms) from which a key it placed may start a job, or nil. A few calls
-- for any number of keys, plus a key's head for each key it unparks.
function kfree(ks, per, now)
  local keys, fields = {}, {}
  for key in pairs(per) do
    keys[#keys + 1] = key
    fields[#fields + 1] = 'r:' .. key
    fields[#fields + 1] = 'p:' .. key
    fields[#fields + 1] = 'u:' .. key
  end
  if #keys == 0 then return nil end
  local v = redis.call('HMGET', ks.state, unpack(fields))
  local set, del, unpark, pass, u = {}, {}, {}, {}, {}
  for i, key in ipairs(keys) do
    local r = (tonumber(v[3 * i - 2] or '0') or 0) - per[key]
    if r > 0 then
      set[#set + 1] = 'r:' .. key
      set[#set + 1] = ms_str(r)
    else
      del[#del + 1] = 'r:' .. key
    end
    if v[3 * i - 1] then
      del[#del + 1] = 'p:' .. key
      unpark[#unpark + 1] = key
      pass[key] = tonumber(v[3 * i - 1])
      u[key] = tonumber(v[3 * i] or '')
    end
  end
  if #set > 0 then redis.call('HSET', ks.state, unpack(set)) end
  if #del > 0 then redis.call('HDEL', ks.state, unpack(del)) end
  if #unpark == 0 then return nil end
  local levels, placed, at = redis.call('HGET', ks.state, 'lv') == '1', {}, {}
  for _, key in ipairs(unpark) do
    at[key] = khead(ks, key, levels)
    if at[key] then placed[#placed + 1] = key end
  end
  return kplace_all(ks, placed, at, u, pass, now)
end

-- kfree_of releases the slots of the jobs whose options entries are os
-- (opts_of; nil or false entries: no key), which just left active (kfree).
function kfree_of(ks, os, now)
  if not os then return nil end
  local per, any = {}, false
  for _, o in pairs(os) do
    local key = o and key_of(o)
    if key then
      per[key] = (per[key] or 0) + 1
      any = true
    end
  end
  if not any then return nil end
  return kfree(ks, per, now)
end

-- kclaim takes up to n due keyed jobs at now (now_us in µs), key by key
-- from kready's lowest pass, each key at most up to its cap (the default
-- cap, 0 = none, or its kconf override), within its rate limit (rate: the
-- default {n, ms} or nil, or its override) and at most quantum jobs per
-- unit of its weight per visit (quantum: n over the keys ready, at least
-- KQUANTUM); a key whose window is used up waits in kwait until it frees. It
-- moves the due keys of kwait to kready first (at most KPROMOTE). It
-- visits keys in rounds: each pops the keys it may need at once and reads
-- and writes their state in a few calls whatever their number, plus one
-- ZRANGEBYLEX per key (per level with levels); at most KROUNDS rounds and
-- n + 8 keys in all. It returns the jobs as ZRANGEBYSCORE WITHSCORES does
-- (id, run-at as a string), their levels ('h', 'n' or 'l') and their
-- keys, with their slots taken and their keys placed again; and the number
-- of keys still ready.
-- O(KPROMOTE log K + (n + 8) log N) for K keys and N waiting jobs.
function kclaim(ks, n, now, now_us, cap_default, rate)
  local due, levels, kof = {}, {}, {}
  local w = redis.call('ZRANGEBYSCORE', ks.wait, '-inf', now, 'LIMIT', 0, KPROMOTE)
  local st = redis.call('HMGET', ks.state, 'vt', 'lv')
  local vt, lv = string.format('%.17g', (tonumber(st[1] or '0') or 0) - 1), st[2] == '1' -- kvt's
  if #w > 0 then
    redis.call('ZREM', ks.wait, unpack(w))
    local z = {}
    for i, key in ipairs(w) do
      z[2 * i - 1] = vt
      z[2 * i] = key
    end
    redis.call('ZADD', ks.ready, 'NX', unpack(z))
  end
  local nready = redis.call('ZCARD', ks.ready)
  if nready == 0 then return due, levels, kof, 0 end
  local quantum = math.max(KQUANTUM, math.floor(n / nready))
  local conf = redis.call('EXISTS', ks.conf) == 1
  local lvs = {'b'}
  if lv then lvs = {'a', 'b', 'c'} end
  local letter = {a = 'h', b = 'n', c = 'l'}
  local pad_now = kpad(now + 1)
  local got, visits, last, ids = 0, 0, nil, {}
  -- per: the jobs a visit is expected to take, a quantum (or the default
  -- cap, if less) at first, then what the visits so far took
  local per = quantum
  if cap_default > 0 then per = math.min(per, cap_default) end
  for _ = 1, KROUNDS do
    if got >= n or visits >= n + 8 then break end
    -- the keys this round may serve: enough for the jobs still wanted,
    -- at per jobs a key
    if visits > 0 then per = math.max(1, math.min(per, got / visits)) end
    local m = math.min(math.ceil((n - got) / per), n + 8 - visits, nready)
    local top = redis.call('ZPOPMIN', ks.ready, m)
    if not top[1] then break end
    local keys, passes, f1, f2 = {}, {}, {}, {}
    for i = 1, #top, 2 do
      local key = top[i]
      keys[#keys + 1] = key
      passes[#keys] = tonumber(top[i + 1])
      f1[#f1 + 1] = 'r:' .. key
      f1[#f1 + 1] = 'u:' .. key
      f2[#f2 + 1] = 'c:' .. key
      f2[#f2 + 1] = 'w:' .. key
      f2[#f2 + 1] = 'r:' .. key
    end
    visits = visits + #keys
    local sv = redis.call('HMGET', ks.state, unpack(f1))
    local cv = {}
    if conf then cv = redis.call('HMGET', ks.conf, unpack(f2)) end
    local counts = redis.call('ZMSCORE', ks.count, unpack(keys))
    local gone, sets, dels, cnt, cnt0, rdy, wt = {}, {}, {}, {}, {}, {}, {}
    for i, key in ipairs(keys) do
      local pass = passes[i]
      if got < n then last = math.max(last or pass, pass) end -- a key served (see the full call below)
      local run, u = tonumber(sv[2 * i - 1] or '0'), tonumber(sv[2 * i] or '')
      local cap, weight, rn, rms = cap_default, 1, 0, 0
      if rate then rn, rms = rate[1], rate[2] end
      if conf then
        cap = tonumber(cv[3 * i - 2] or '') or cap
        weight = tonumber(cv[3 * i - 1] or '') or 1
        local a, b = string.match(cv[3 * i] or '', '^(%d+);(%d+)$')
        if a then rn, rms = tonumber(a), tonumber(b) end
      end
      local left = tonumber(counts[i] or '0') or 0
      if u and u <= now then dels[#dels + 1] = 'u:' .. key end -- its limit has passed: nothing kept
      if left <= 0 then
        -- no job left: the key is idle, in none of the sets
      elseif u and u > now then
        wt[#wt + 1] = ms_str(u)
        wt[#wt + 1] = key
      elseif cap > 0 and run >= cap then
        sets[#sets + 1] = 'p:' .. key
        sets[#sets + 1] = string.format('%.17g', pass)
      elseif got >= n then
        -- the call is full before this key's turn: it stays ready, as it was
        rdy[#rdy + 1] = string.format('%.17g', pass)
        rdy[#rdy + 1] = key
      else
        local q = math.min(n - got, quantum * math.max(weight, 1))
        if cap > 0 then q = math.min(q, cap - run) end
        local rk, rused, rcum, rfirst, rlast
        if rn > 0 then
          rk = krate(ks, key)
          rused, rcum, rfirst, rlast = rate_read(rk, now_us, rms)
          if not rused then rused, rcum = rn, 0 end -- not a window: start nothing
          q = math.min(q, math.max(rn - rused, 0))
        end
        local took = 0
        if q > 0 then
          for _, l in ipairs(lvs) do
            if took >= q then break end
            local ms = redis.call('ZRANGEBYLEX', ks.due, '[' .. key .. '\0' .. l, '(' .. key .. '\0' .. l .. pad_now, 'LIMIT', 0, q - took)
            for _, mb in ipairs(ms) do
              local id = string.sub(mb, #key + 17)
              gone[#gone + 1] = mb
              ids[#ids + 1] = id
              due[#due + 1] = id
              due[#due + 1] = string.format('%d', tonumber(string.sub(mb, #key + 3, #key + 15)))
              levels[#due / 2] = letter[l]
              kof[#due / 2] = key
            end
            took = took + #ms
          end
        end
        if took > 0 then
          got = got + took
          run = run + took
          left = left - took
          sets[#sets + 1] = 'r:' .. key
          sets[#sets + 1] = ms_str(run)
          if left > 0 then
            cnt[#cnt + 1] = ms_str(left)
            cnt[#cnt + 1] = key
          else
            cnt0[#cnt0 + 1] = key
          end
          pass = pass + took * KSTRIDE / math.max(weight, 1)
          if rk then rate_note(rk, now_us, rms, rcum, rlast, took) end
        end
        local spent = rk and rused + took >= rn -- its rate window is used up
        if left <= 0 then
          -- no job left: the key is idle
        elseif cap > 0 and run >= cap then
          sets[#sets + 1] = 'p:' .. key
          sets[#sets + 1] = string.format('%.17g', pass)
        elseif took > 0 and took == q and not spent then
          -- it took all it could: likely more are due (a visit that finds
          -- none places it by its head)
          rdy[#rdy + 1] = string.format('%.17g', pass)
          rdy[#rdy + 1] = key
        else
          local at = khead(ks, key, lv)
          if at and spent then
            -- the window is used up: the key waits until its oldest start leaves it
            local free = now + rms
            if rfirst then free = math.ceil(rfirst / 1000) + rms end
            at = math.max(at, free)
          end
          if at and at <= now then
            rdy[#rdy + 1] = string.format('%.17g', pass)
            rdy[#rdy + 1] = key
          elseif at then
            wt[#wt + 1] = ms_str(at)
            wt[#wt + 1] = key
          end
        end
      end
    end
    -- the round's writes, a call each
    if #gone > 0 then redis.call('ZREM', ks.due, unpack(gone)) end
    if #sets > 0 then redis.call('HSET', ks.state, unpack(sets)) end
    if #dels > 0 then redis.call('HDEL', ks.state, unpack(dels)) end
    if #cnt > 0 then redis.call('ZADD', ks.count, unpack(cnt)) end
    if #cnt0 > 0 then redis.call('ZREM', ks.count, unpack(cnt0)) end
    if #rdy > 0 then redis.call('ZADD', ks.ready, unpack(rdy)) end
    if #wt > 0 then redis.call('ZADD', ks.wait, unpack(wt)) end
    nready = redis.call('ZCARD', ks.ready)
    if nready == 0 then break end
  end
  if #ids > 0 then redis.call('ZREM', ks.ids, unpack(ids)) end
  -- vt never goes back: a key placed before it (kvt) does not pull it back
  if last and last > (tonumber(st[1] or '') or -math.huge) then
    redis.call('HSET', ks.state, 'vt', string.format('%.17g', last))
  end
  return due, levels, kof, nready
end

-- KWEIGH bounds the ready keys whose weights kweight reads.
KWEIGH = 32

-- kweight returns the sum of the weights of the nready keys in kready (a
-- partition's claim in the pool takes turns by it): nready when no key has
-- a weight of its own (conf: kconf exists); else the sum read from kconf,
-- exact up to KWEIGH keys, and beyond that nready times the mean weight of
-- the KWEIGH of the lowest passes (each key's pass moves on by a quantum a
-- visit whatever its weight, so those are any keys). O(KWEIGH).
function kweight(ks, nready, conf)
  if nready == 0 or not conf then return nready end
  local keys = redis.call('ZRANGE', ks.ready, 0, KWEIGH - 1)
  if #keys == 0 then return 0 end
  local f = {}
  for i, key in ipairs(keys) do f[i] = 'w:' .. key end
  local ws = redis.call('HMGET', ks.conf, unpack(f))
  local sum = 0
  for i = 1, #keys do sum = sum + math.max(tonumber(ws[i] or '') or 1, 1) end
  return sum * nready / #keys
end

-- knext returns the earliest time (ms) at which a keyed job may be claimed
-- after a claim at now that left ready keys (more) or not, or nil.
function knext(ks, more, now)
  if more then return now end
  return head_ms(ks.wait)
end
