-- retry.lua: end a failed attempt, spending it: back to due after a delay, or to dead.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] claims hash   KEYS[6] state hash   KEYS[7] due:high zset
-- KEYS[8] due:low zset   KEYS[9] opts hash   KEYS[10] unique hash
-- KEYS[11] unique:exp zset   KEYS[12] history hash   KEYS[13] history:minutes
--   zset (record.lua's history_add): the attempt counts as retried (to
--   'due') or died (to 'dead'); nothing when the record had vanished
-- KEYS[14..20] the seven keys of job keys (keys.lua's kset): a
--   keyed job's slot is released (kfree) and, to 'due', the job waits among
--   its key's again (kput)
-- ARGV[1] wake channel   ARGV[2] id   ARGV[3] claim   ARGV[4] to = 'due' | 'dead'
-- ARGV[5] delay_ms (for 'due')   ARGV[6] error text (stored as the last error)
-- returns: 1 = moved, 0 = stale (the job is not active under that claim)
-- A job goes back to the due zset of its priority level; one that dies
-- releases its unique key (options.lua's finished).
-- bound: one job; O(log N) plus the error text, whatever the payload's size:
--   the attempt is counted in the job's state entry, never in its record

local id, to, delay = ARGV[2], ARGV[4], tonumber(ARGV[5])
if not string.match(ARGV[3], '^%d+$') then return redis.error_reply('ERR courier: claim must be a number') end
if to ~= 'due' and to ~= 'dead' then return redis.error_reply("ERR courier: to must be 'due' or 'dead'") end
if to == 'due' and (not delay or delay < 0) then return redis.error_reply('ERR courier: delay_ms must be >= 0') end

if not KEYS[20] then return redis.error_reply('ERR courier: retry needs the due levels, opts, unique, history keys and those of job keys') end
if not held(KEYS[5], {id}, {ARGV[3]})[1] then return 0 end
local now = now_ms()
redis.call('HDEL', KEYS[5], id)
redis.call('ZREM', KEYS[3], id)
local os = opts_of(KEYS[9], {id})
local ks, key = kset(14), os and os[1] and key_of(os[1])
if key then
  wake(ARGV[1], nil, kfree(ks, {[key] = 1}, now_ms()))
end
if redis.call('HEXISTS', KEYS[1], id) == 0 then
  redis.call('HDEL', KEYS[6], id)
  if os then
    finished(KEYS[10], KEYS[11], {id}, os, now)
    redis.call('HDEL', KEYS[9], id)
  end
  return 1 -- the record vanished (deleted by hand): nothing to keep
end
-- Without a state entry, the job was claimed with the fresh default header
-- (see record.lua): no attempt spent, the queue's max.
local attempts, max = st_decode(redis.call('HGET', KEYS[6], id) or '')
redis.call('HSET', KEYS[6], id, st_encode((attempts or 0) + 1, max or 0, ARGV[6]))
if to == 'dead' then
  redis.call('ZADD', KEYS[4], now, id)
  finished(KEYS[10], KEYS[11], {id}, os, now)
else
  if key then
    wake(ARGV[1], nil, kput(ks, {{id, key, level_of(os[1]), now + delay}}, now))
  else
    local d = dues(KEYS[7], KEYS[2], KEYS[8])
    local prev = heads_ms(d)
    redis.call('ZADD', d[level_of(os and os[1])], now + delay, id)
    wake(ARGV[1], prev, now + delay)
  end
end
history_add(KEYS[12], KEYS[13], now, to == 'dead' and 'd' or 'r', 1) -- after the work; never fails it
return 1
