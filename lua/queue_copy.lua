-- queue_copy.lua: give a partition i >= 1 of a queue the queue's record
-- (queue_set.lua), unless it holds that revision or a newer one: every copy
-- is a whole record, so copies sent in any order leave each partition with
-- the newest. A partition the layout serves loses a retirement older than
-- the layout; one it does not serve is retired by it.
-- KEYS[1] the partition's settings hash: rev, v, partitions, partitions_prev,
--   id_retention, share, retired (the version of the layout that retired
--   it; enqueue.lua refuses while it is set); share_next, the share in a
--   layout being written (claim.lua), is deleted; a share replaced is kept
--   in share_was (record.lua's share_set)
-- KEYS[2] the partition's paused string
-- ARGV[1] rev   ARGV[2] v (the layout's version)   ARGV[3] partitions
-- ARGV[4] prev ("4,2" or "")   ARGV[5] id retention in ms (0 = none)
-- ARGV[6] '1' paused, '0' running   ARGV[7] share "<i>;<m>"
-- ARGV[8] '1' the layout serves the partition, '0' it retired it
-- ARGV[9] the partition's wake channel: a change of the pause is announced
--   there, as queue_set.lua does
-- returns: 1 = taken, 0 = the partition holds this revision or a newer one
--   (nothing written)
-- bound: O(1)

local k, paused = KEYS[1], KEYS[2]
if not paused then return redis.error_reply('ERR courier: queue_copy needs the settings and paused keys') end
local rev, v, n, prev, ret, p, share, serves, channel =
  ARGV[1] or '', ARGV[2] or '', ARGV[3] or '', ARGV[4] or '', ARGV[5] or '', ARGV[6], ARGV[7] or '', ARGV[8], ARGV[9] or ''
if not string.match(rev, '^%d+$') or #rev > 16 or not string.match(v, '^%d+$') or #v > 16 then
  return redis.error_reply('ERR courier: queue_copy rev and v must be integers')
end
local bad = layout_bad(n, prev)
if bad then return redis.error_reply('ERR courier: queue_copy ' .. bad) end
if not string.match(ret, '^%d+$') or #ret > 11 then return redis.error_reply('ERR courier: queue_copy retention must be ms') end
if (p ~= '1' and p ~= '0') or (serves ~= '1' and serves ~= '0') then
  return redis.error_reply('ERR courier: queue_copy paused and serves must be 1 or 0')
end
if not string.match(share, '^%d+;%d+$') then return redis.error_reply('ERR courier: queue_copy share must be "<i>;<m>"') end
if channel == '' then return redis.error_reply('ERR courier: queue_copy needs the wake channel') end

local have = tonumber(redis.call('HGET', k, 'rev') or '0') or 0
if have >= tonumber(rev) then return 0 end

redis.call('HSET', k, 'rev', rev, 'v', v, 'partitions', n)
-- share_next "0;0": a layout being written adds this partition (none
-- until this copy; store.CapShares)
share_set(k, share, '0;0', redis.call('HGET', k, 'share_next') == '0;0')
redis.call('HDEL', k, 'share_next')
field_set(k, 'partitions_prev', prev, '')
field_set(k, 'id_retention', ret, '0')
local retired = redis.call('HGET', k, 'retired')
if serves == '1' then
  -- a retirement by a later layout (one being changed now, not published
  -- yet) stays; older versions wrote "1"
  if retired and (tonumber(retired) or 0) <= tonumber(v) then redis.call('HDEL', k, 'retired') end
elseif not retired or (tonumber(retired) or 0) < tonumber(v) then
  redis.call('HSET', k, 'retired', v)
end
pause_set(paused, p == '1', channel)
return 1
