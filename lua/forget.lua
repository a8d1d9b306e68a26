-- forget.lua: delete what an unused queue leaves behind, only when it holds
-- no job in any state but completed and nothing serves it: the active
-- zset's pin, the claims hash (its pin and last token), the state hash, the
-- rate window, the per-minute history, and the completed jobs it retained
-- (complete.lua) with their records and results: they keep no queue in
-- use, since only a leader of the queue, which no process is, trims them.
-- A paused queue is in use: an operator paused it, and it stays paused (and
-- listed) until resumed.
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] claims hash   KEYS[6] state hash   KEYS[7] rate zset
-- KEYS[8] leader hash   KEYS[9] periodic hash   KEYS[10] fleet set
-- KEYS[11] paused string   KEYS[12] due:high zset   KEYS[13] due:low zset
-- KEYS[14] opts hash   KEYS[15] unique hash   KEYS[16] unique:exp zset
--   (a unique key or id remembered for a window keeps the queue in use)
-- KEYS[17] settings hash   KEYS[18] history hash   KEYS[19] history:minutes
--   zset (deleted with the rest: a history alone keeps no queue in use)
-- KEYS[20] completed zset   KEYS[21] results hash   KEYS[22] cancelled zset
--   (cancelled jobs keep the queue in use, as dead ones do: an operator
--   may requeue them)
-- KEYS[23..29] (optional) the seven keys of job keys (keys.lua's kset):
--   a keyed job that waits keeps the queue in use (its record does); what
--   keys leave behind (a key's pass, its own cap and weight) is deleted
-- ARGV: none
-- returns: 1 = the queue was unused and its leftovers are gone (or there were
--   none), 0 = it is in use (nothing changed)
-- bound: O(1) reads (every record is a completed job's when there are no
--   more records than completed jobs); the deleted keys hold at most the
--   pins, one token, the entries of jobs that no longer exist, the
--   history's minutes (15 fields a minute, at most the leader's retention of
--   them) and the completed jobs (at most the queue's retained count, which
--   UNLINK frees off Redis's main thread)

if not KEYS[22] then return redis.error_reply('ERR courier: forget needs the paused, due level, opts, unique, settings, history, completed, results and cancelled keys') end
if redis.call('EXISTS', KEYS[2], KEYS[4], KEYS[8], KEYS[9], KEYS[10], KEYS[11], KEYS[12], KEYS[13], KEYS[15], KEYS[22]) > 0 then return 0 end
if redis.call('ZCOUNT', KEYS[3], '-inf', '(inf') > 0 then return 0 end
if redis.call('HLEN', KEYS[1]) > redis.call('ZCARD', KEYS[20]) then return 0 end
redis.call('UNLINK', KEYS[1], KEYS[3], KEYS[5], KEYS[6], KEYS[7], KEYS[14], KEYS[16], KEYS[17], KEYS[18], KEYS[19], KEYS[20], KEYS[21])
if KEYS[29] then redis.call('UNLINK', KEYS[23], KEYS[24], KEYS[25], KEYS[26], KEYS[27], KEYS[28], KEYS[29]) end
return 1
