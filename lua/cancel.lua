-- cancel.lua: cancel a job. One that has not started is deleted. A running
-- one ends: it leaves active (its claim is dropped, so the worker's late
-- ack, retry or extension is stale and ignored) and goes to the dead set
-- with the last error "cancelled", its running attempt spent, so it can be
-- requeued; the worker holding it is told on the queue's wake channel
-- ("cancel@<claim>:<id>": the claim token of the run it ended, so a
-- message that arrives late ends no later run of the id; versions before
-- sent "cancel:<id>", which Go still reads as any run of the id), and
-- learns it at its next lease extension if that message is lost
-- (extend.lua).
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] state hash   KEYS[6] claims hash   KEYS[7] due:high zset
-- KEYS[8] due:low zset   KEYS[9] opts hash   KEYS[10] unique hash
-- KEYS[11] unique:exp zset (a cancelled job releases its unique key, or
--   keeps it for its window: options.lua's finished)
-- KEYS[12] completed zset (complete.lua)
-- ARGV[1] id   ARGV[2] wake channel
-- returns: 1 = deleted (it had not started), 2 = it was running: now dead,
--   its worker told; 0 = no such job; -2 = dead already (untouched: requeue
--   or purge it instead); -3 = completed already (untouched: it finished,
--   and its queue retains it)
-- bound: one job; O(log N)

local id, channel = ARGV[1], ARGV[2]
if not KEYS[12] or not channel or channel == '' then
  return redis.error_reply('ERR courier: cancel needs the claims, due levels, opts, unique and completed keys and the wake channel')
end
local os = opts_of(KEYS[9], {id})
local due = KEYS[2]
if os then due = dues(KEYS[7], KEYS[2], KEYS[8])[level_of(os[1])] end
if redis.call('ZREM', due, id) == 1 then
  redis.call('HDEL', KEYS[1], id)
  redis.call('HDEL', KEYS[5], id)
  if os then
    finished(KEYS[10], KEYS[11], {id}, os, now_ms())
    redis.call('HDEL', KEYS[9], id)
  end
  return 1
end
if redis.call('ZSCORE', KEYS[3], id) then
  local now = now_ms()
  local claim = claim_token(redis.call('HGET', KEYS[6], id))
  redis.call('ZREM', KEYS[3], id)
  redis.call('HDEL', KEYS[6], id)
  if redis.call('HEXISTS', KEYS[1], id) == 0 then
    redis.call('HDEL', KEYS[5], id)
    return 2 -- the record vanished (deleted by hand): nothing to keep
  end
  -- Without a state entry, the job was claimed with the fresh default
  -- header (see record.lua): no attempt spent, the queue's max.
  local attempts, max = st_decode(redis.call('HGET', KEYS[5], id) or '')
  redis.call('HSET', KEYS[5], id, st_encode((attempts or 0) + 1, max or 0, CANCELLED))
  redis.call('ZADD', KEYS[4], now, id)
  finished(KEYS[10], KEYS[11], {id}, os, now)
  if claim then
    announce(channel, 'cancel@' .. claim .. ':' .. id)
  else
    announce(channel, 'cancel:' .. id) -- no claim to name (data edited by hand)
  end
  return 2
end
if redis.call('ZSCORE', KEYS[4], id) then return -2 end
if redis.call('ZSCORE', KEYS[12], id) then return -3 end
return 0
