-- queue_set.lua: change a queue's record, the one copy every
-- partition follows: its layout, its id retention and its pause. It lives in
-- partition 0's keys (the queue's own); the other partitions take it through
-- queue_copy.lua. Each change gets a new revision, max(rev + 1, the Redis
-- clock in µs), so a revision is never handed out twice, even after Redis
-- lost its last writes; a copy is taken only by a partition holding an older
-- one. A change that leaves the record as it was keeps its revision.
-- KEYS[1] settings hash (partition 0's): rev, v (the layout's version: the
--   revision that published it), partitions and partitions_prev (the layout,
--   read by older versions too), id_retention (ms), share (rate share
--   "<i>;<m>": this partition is i of m, record.lua's share_set; a layout
--   deletes share_next, claim.lua's share in a layout being written)
-- KEYS[2] paused string: "1" while paused (claim.lua takes nothing)
-- ARGV[1] the change, then its arguments:
--   'retention' <ms>        id retention, 0 = none (at most a year)
--   'pause' <1|0> <channel> pause (1) or resume (0); the change is announced
--                           on the wake channel: "paused", or on resume the
--                           Redis clock in ms (a wake-up for due jobs)
--   'layout' <rev> <n> <prev> <share>
--                           publish a layout of n partitions (1..64), prev
--                           the earlier numbers still draining ("4,2" or ""),
--                           only while the record is at revision rev ("" =
--                           never written): the compare-and-set of a layout
--                           change (worker/internal/queue)
-- returns: {changed, rev, v, partitions, prev, id_retention, paused}:
--   changed 1 = written, 0 = already so, -1 = a layout refused because the
--   revision moved (nothing written); then the record as it now is, the
--   fields as stored (nil where absent: store.ReadQueue reads them alike)
--   and paused 1 or 0
-- bound: O(1)

local op = ARGV[1]
local k, paused = KEYS[1], KEYS[2]
if not paused then return redis.error_reply('ERR courier: queue_set needs the settings and paused keys') end

local function record(changed)
  local f = redis.call('HMGET', k, 'rev', 'v', 'partitions', 'partitions_prev', 'id_retention')
  return {changed, f[1], f[2], f[3], f[4], f[5], redis.call('EXISTS', paused)}
end

-- bump gives the record a new revision and returns it.
local function bump()
  local _, now_us = now_ms()
  local rev = math.max((tonumber(redis.call('HGET', k, 'rev')) or 0) + 1, now_us)
  redis.call('HSET', k, 'rev', ms_str(rev))
  return rev
end

if op == 'retention' then
  local ms = ARGV[2] or ''
  if not string.match(ms, '^%d+$') or #ms > 11 or tonumber(ms) > 31622400000 then
    return redis.error_reply('ERR courier: retention must be 0 to 31622400000 ms')
  end
  if (redis.call('HGET', k, 'id_retention') or '0') == ms then return record(0) end
  field_set(k, 'id_retention', ms, '0')
  bump()
  return record(1)
end

if op == 'pause' then
  local on, channel = ARGV[2], ARGV[3]
  if on ~= '1' and on ~= '0' then return redis.error_reply('ERR courier: pause takes "1" (pause) or "0" (resume)') end
  if not channel or channel == '' then return redis.error_reply('ERR courier: pause needs the wake channel') end
  if not pause_set(paused, on == '1', channel) then return record(0) end
  bump()
  return record(1)
end

if op == 'layout' then
  local want, n, prev, share = ARGV[2] or '', ARGV[3] or '', ARGV[4] or '', ARGV[5] or ''
  if not string.match(want, '^%d*$') or #want > 16 then return redis.error_reply('ERR courier: layout revision must be digits or empty') end
  local bad = layout_bad(n, prev)
  if bad then return redis.error_reply('ERR courier: layout ' .. bad) end
  if not string.match(share, '^%d+;%d+$') then return redis.error_reply('ERR courier: layout share must be "<i>;<m>"') end
  local rev = redis.call('HGET', k, 'rev') or ''
  if rev ~= want then return record(-1) end
  local v = bump()
  redis.call('HSET', k, 'v', ms_str(v))
  share_set(k, share, nil, false)
  redis.call('HDEL', k, 'share_next')
  -- a queue of one partition and nothing draining reads, to older versions,
  -- as a queue never split
  field_set(k, 'partitions', n, (prev == '' and '1') or nil)
  field_set(k, 'partitions_prev', prev, '')
  return record(1)
end

return redis.error_reply('ERR courier: queue_set takes retention, pause or layout')
