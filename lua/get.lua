-- get.lua: read one job and where it is (read only).
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] claims hash   KEYS[6] state hash   KEYS[7] due:high zset
-- KEYS[8] due:low zset   KEYS[9] opts hash   KEYS[10] completed zset
-- KEYS[11] results hash   KEYS[12] cancelled zset (cancel.lua)
-- KEYS[13] (optional) the kids zset of job keys (keys.lua): a keyed job
--   that waits is 'due' there
-- ARGV[1] id
-- returns: nil when there is no such job, else {record, claim, set, score,
--   now_ms, state, opts, worker, result}
--   claim = the running attempt's claim token, -1 when not active;
--   set = 'due' | 'active' | 'dead' | 'completed' | 'cancelled' | 'none';
--   score = run-at, lease deadline, time of death, finish time or cancel
--   time in ms (-1 with 'none');
--   state = the job's state entry, '' when it has none (it overrides the
--   record's attempts, max and last error: see record.lua); opts = its options entry (priority, unique key:
--   see options.lua), '' when it has none; worker = the process that
--   claimed the running attempt, '' when not active or not recorded;
--   result = a completed job's result (complete.lua), '' when it has none or
--   is not completed
-- bound: one job; O(log N)

if not KEYS[12] then return redis.error_reply('ERR courier: get needs the due levels, opts, completed, results and cancelled keys') end
local id = ARGV[1]
local s = redis.call('HGET', KEYS[1], id)
if not s then return nil end
local now = now_ms()
local tok, worker = claim_token(redis.call('HGET', KEYS[5], id))
local claim = tonumber(tok or '') or -1
local st = redis.call('HGET', KEYS[6], id) or ''
local o = redis.call('HGET', KEYS[9], id) or ''
local sets = {{KEYS[2], 'due'}, {KEYS[7], 'due'}, {KEYS[8], 'due'}, {KEYS[3], 'active'}, {KEYS[4], 'dead'}, {KEYS[10], 'completed'}, {KEYS[12], 'cancelled'}}
if KEYS[13] then table.insert(sets, 1, {KEYS[13], 'due'}) end
for _, ks in ipairs(sets) do
  local score = redis.call('ZSCORE', ks[1], id)
  if score then
    local result = ''
    if ks[2] == 'completed' then result = redis.call('HGET', KEYS[11], id) or '' end
    return {s, claim, ks[2], tonumber(score), now, st, o, worker, result}
  end
end
return {s, claim, 'none', -1, now, st, o, worker, ''}
