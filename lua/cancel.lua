-- cancel.lua: cancel a job, before it started or while it runs. Either way
-- it goes to the queue's cancelled set (id → cancel time, ms), keeping its
-- record, state and options entries, so it can be listed, requeued or
-- purged until the leader trims the set (trim.lua). Its unique key is
-- released, or kept for its window (options.lua's finished).
-- A job that had not started leaves due with its attempts and last error
-- as they were. A running one leaves active (its claim is dropped, so the
-- worker's late ack, retry or extension is stale and ignored), its
-- running attempt spent and its last error "cancelled"; the worker holding
-- it is told on the queue's wake channel ("cancel@<claim>:<id>": the claim
-- token of the run it ended, so a message that arrives late ends no later
-- run of the id; versions before sent "cancel:<id>", which Go still reads
-- as any run of the id), and learns it at its next lease extension if that
-- message is lost (extend.lua).
-- Versions before the cancelled set deleted a job that had not started and
-- put a running one in the dead set with the last error "cancelled": such
-- jobs stay dead (purge or requeue them as dead jobs).
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] state hash   KEYS[6] claims hash   KEYS[7] due:high zset
-- KEYS[8] due:low zset   KEYS[9] opts hash   KEYS[10] unique hash
-- KEYS[11] unique:exp zset   KEYS[12] completed zset (complete.lua)
-- KEYS[13] cancelled zset   KEYS[14..20] the seven keys of job keys
--   (keys.lua's kset): a keyed job that had not started leaves its key's
--   waiting jobs (kdrop); a running one gives its slot back (kfree)
-- ARGV[1] id   ARGV[2] wake channel
-- returns: 1 = it had not started: now cancelled, 2 = it was running: now
--   cancelled, its worker told; 0 = no such job; -2 = dead already
--   (untouched: requeue or purge it instead); -3 = completed already
--   (untouched: it finished, and its queue retains it); -4 = cancelled
--   already (untouched: a call sent again finds its own work done)
-- bound: one job; O(log N)

local id, channel = ARGV[1], ARGV[2]
if not KEYS[20] or not channel or channel == '' then
  return redis.error_reply('ERR courier: cancel needs the claims, due levels, opts, unique, completed and cancelled keys and the wake channel')
end
local os = opts_of(KEYS[9], {id})
local due = KEYS[2]
if os then due = dues(KEYS[7], KEYS[2], KEYS[8])[level_of(os[1])] end
local ks, key = kset(14), os and os[1] and key_of(os[1])
local waited
if key then
  waited = kdrop(ks, {{id, key, level_of(os[1])}}) == 1
else
  waited = redis.call('ZREM', due, id) == 1
end
if waited then
  local now = now_ms()
  if redis.call('HEXISTS', KEYS[1], id) == 0 then
    -- the record vanished (deleted by hand): nothing to keep
    redis.call('HDEL', KEYS[5], id)
    redis.call('HDEL', KEYS[9], id)
    finished(KEYS[10], KEYS[11], {id}, os, now)
    return 1
  end
  redis.call('ZADD', KEYS[13], now, id)
  finished(KEYS[10], KEYS[11], {id}, os, now)
  return 1
end
if redis.call('ZSCORE', KEYS[3], id) then
  local now = now_ms()
  local claim = claim_token(redis.call('HGET', KEYS[6], id))
  redis.call('ZREM', KEYS[3], id)
  redis.call('HDEL', KEYS[6], id)
  if key then wake(channel, nil, kfree(ks, {[key] = 1}, now)) end
  if redis.call('HEXISTS', KEYS[1], id) == 0 then
    redis.call('HDEL', KEYS[5], id)
    return 2 -- the record vanished (deleted by hand): nothing to keep
  end
  -- Without a state entry, the job was claimed with the fresh default
  -- header (see record.lua): no attempt spent, the queue's max.
  local attempts, max = st_decode(redis.call('HGET', KEYS[5], id) or '')
  redis.call('HSET', KEYS[5], id, st_encode((attempts or 0) + 1, max or 0, CANCELLED))
  redis.call('ZADD', KEYS[13], now, id)
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
if redis.call('ZSCORE', KEYS[13], id) then return -4 end
return 0
