-- options.lua: the helpers of priorities and unique jobs, which scripts
-- share as they share record.lua's. Not a script of its own: the script
-- layer (worker/internal/script) ships each script with the definitions it
-- names (see doc.go).

-- Priorities and unique jobs. A job of the default priority and without a
-- unique key or a retained id has no options entry, and the scripts read
-- none for it: a queue that uses neither costs one EXISTS per call.
--   opts[id]    = "<level>;<since>;<for_ms>;<retain_ms>;" .. unique_key
--                 (a keyed job's: see opt_decode)
--                 written by enqueue, deleted with the record. level: 'h'
--                 (high), 'n' (normal), 'l' (low); since: 'e' (the unique
--                 window counts from the enqueue), 'f' (from the finish) or
--                 '-' (no window: the key is held until the job finishes);
--                 for_ms: the window; retain_ms: how long the job's own id
--                 stays refused after it finished (the queue's id_retention,
--                 for a caller-supplied id), 0 = not at all.
--   due:<level> the due zset of a level (KEYS name them: 'due' is normal,
--                 'due:high' and 'due:low' the others). Claim takes from the
--                 highest level with a job due first (or by the queue's
--                 weights), each level by run-at; everything else that looks
--                 at "due" looks at the three.
--   unique[f]   = "<live>;<until_ms>;" .. id: who holds a unique key (f =
--                 "k:" .. key) or a retained id (f = "i:" .. id). live is 1
--                 while the job has not finished; until_ms, when not 0, is
--                 the end of a window, and the field is also in the
--                 unique:exp zset under that score, where the leader's
--                 cleanup (uniq_expire.lua) finds it. A field is free when
--                 it is absent, or not live and past its window, or live
--                 under an id whose record is gone (deleted by hand).

-- CALLER_ONLY is the options enqueue.lua is given for a job whose only
-- option is that the caller chose its id.
CALLER_ONLY = 'n;-;0;1;'

-- opt_decode returns the level, since, window (ms), retention (ms), unique
-- key and job key (nil for none) of an options entry, or nil when s is not
-- one. A keyed job's entry has its level in upper case and its key after
-- the retention: "<H|N|L>;<since>;<for_ms>;<retain_ms>;<keylen>;" .. key ..
-- unique_key (keys.lua); versions before job keys read no options in it.
function opt_decode(s)
  local level, since, w, r, pos = string.match(s, '^([hnlHNL]);([ef%-]);(%d+);(%d+);()')
  if not level or #w > 12 or #r > 12 then return nil end
  local key = nil
  if level <= 'Z' then
    local len, at = string.match(s, '^(%d+);()', pos)
    if not len then return nil end
    key = string.sub(s, at, at + tonumber(len) - 1)
    pos = at + tonumber(len)
    level = string.lower(level)
  end
  return level, since, tonumber(w), tonumber(r), string.sub(s, pos), key
end

-- key_of returns the job key of an options entry, or nil when it has none.
function key_of(o)
  local c = string.byte(o, 1)
  if not c or c > 90 then return nil end -- not upper case: no key
  local _, _, _, _, _, key = opt_decode(o)
  return key
end

-- opts_of returns the options entries of ids (false where a job has none),
-- or nil when the queue has none at all.
function opts_of(opts, ids)
  if #ids == 0 or redis.call('EXISTS', opts) == 0 then return nil end
  return redis.call('HMGET', opts, unpack(ids))
end

-- level_of returns the level ('h', 'n' or 'l') of an options entry (false
-- or nil: 'n').
function level_of(o)
  if o then
    local c = string.lower(string.sub(o, 1, 1))
    if c == 'h' or c == 'l' then return c end
  end
  return 'n'
end

-- dues maps a level to its due zset, from the three keys given.
function dues(high, normal, low)
  return {h = high, n = normal, l = low}
end

-- heads_ms returns the earliest run-at of the due zsets of d (see dues),
-- or nil when none holds a job. A queue without jobs of the other levels
-- (the common case) pays one EXISTS for them.
function heads_ms(d)
  local best = head_ms(d.n)
  if redis.call('EXISTS', d.h, d.l) == 0 then return best end
  for _, k in ipairs({d.h, d.l}) do
    local s = head_ms(k)
    if s and (not best or s < best) then best = s end
  end
  return best
end

-- uniq_parse splits a unique entry into live (boolean), until_ms and the
-- holder's id.
function uniq_parse(e)
  local live, untl, id = string.match(e, '^([01]);(%d+);(.*)$')
  if not live then return false, 0, '' end
  return live == '1', tonumber(untl), id
end

-- uniq_holder returns the id holding the unique entry e (a field's value,
-- or false/nil for none) at now: a live job whose record exists, or one
-- within its window; nil when the field is free.
function uniq_holder(jobs, e, now)
  if not e then return nil end
  local live, untl, id = uniq_parse(e)
  if (live and redis.call('HEXISTS', jobs, id) == 1) or untl > now then return id end
  return nil
end

-- zadd_levels adds the (score, id) lists of by ({h =, n =, l =}) to the
-- due zsets of d, one ZADD per level that has any.
function zadd_levels(d, by)
  for level, z in pairs(by) do
    if #z > 0 then redis.call('ZADD', d[level], unpack(z)) end
  end
end

-- uniq_set writes the unique field f for id: live or not, until untl (0 =
-- no window); a window goes to the exp zset, where the cleanup finds it.
function uniq_set(unique, uexp, f, live, untl, id)
  local l = '0'
  if live then l = '1' end
  redis.call('HSET', unique, f, l .. ';' .. ms_str(untl) .. ';' .. id)
  if untl > 0 then redis.call('ZADD', uexp, ms_str(untl), f) end
end

-- finished releases what the jobs ids, which just finished (acked, dead or
-- cancelled), held: os are their options entries (opts_of). A unique key
-- held by the job is freed, or kept until its window ends (counted from
-- now for 'f'); a retained id is remembered until now + its retention.
function finished(unique, uexp, ids, os, now)
  if not os then return end
  for i, id in ipairs(ids) do
    local o = os[i]
    if o then
      local _, since, w, r, key = opt_decode(o)
      if key and key ~= '' then
        local f = 'k:' .. key
        local e = redis.call('HGET', unique, f)
        if e then
          local _, untl, holder = uniq_parse(e)
          if holder == id then
            if since == 'f' then untl = now + w end
            if untl > now then
              uniq_set(unique, uexp, f, false, untl, id)
            else
              redis.call('HDEL', unique, f)
            end
          end
        end
      end
      if r and r > 0 then uniq_set(unique, uexp, 'i:' .. id, false, now + r, id) end
    end
  end
end

-- LEVELS lists the priority levels, highest first.
LEVELS = {'h', 'n', 'l'}

-- take_levels reads up to take jobs due at now from the due zsets of d (see
-- dues) and returns them as ZRANGEBYSCORE WITHSCORES does (a flat list of
-- id, score), level by level, highest first, each by run-at; and the level
-- of each job. Strict (weights nil): the highest levels first. With
-- weights ({h =, n =, l =}): each of the take jobs first goes to one of the
-- levels that have a job due, in proportion to their weights, stepping
-- from the clock's µs (seed) by the golden ratio so that calls of one job
-- each spread as the weights say; what a level cannot fill goes to the
-- others, highest first. O(levels + take log N).
function take_levels(d, now, take, weights, seed)
  local quota = {h = 0, n = 0, l = 0}
  if weights then
    local live, total = {}, 0
    for _, lv in ipairs(LEVELS) do
      local h = redis.call('ZRANGE', d[lv], 0, 0, 'WITHSCORES')
      if h[2] and tonumber(h[2]) <= now and weights[lv] > 0 then
        live[#live + 1] = lv
        total = total + weights[lv]
      end
    end
    if #live > 0 then
      local x, step = seed % total, total * 0.6180339887498949
      for _ = 1, take do
        local acc = 0
        for _, lv in ipairs(live) do
          acc = acc + weights[lv]
          if x < acc then
            quota[lv] = quota[lv] + 1
            break
          end
        end
        x = (x + step) % total
      end
    end
  end
  local got, left = {h = {}, n = {}, l = {}}, take
  local function read(lv, k)
    if k <= 0 or left <= 0 then return end
    local g = got[lv]
    local r = redis.call('ZRANGEBYSCORE', d[lv], '-inf', now, 'WITHSCORES', 'LIMIT', #g / 2, math.min(k, left))
    for i = 1, #r do g[#g + 1] = r[i] end
    left = left - #r / 2
  end
  for _, lv in ipairs(LEVELS) do read(lv, quota[lv]) end
  for _, lv in ipairs(LEVELS) do read(lv, left) end
  local out, levels = {}, {}
  for _, lv in ipairs(LEVELS) do
    local g = got[lv]
    for i = 1, #g, 2 do
      out[#out + 1] = g[i]
      out[#out + 1] = g[i + 1]
      levels[#levels + 1] = lv
    end
  end
  return out, levels
end
