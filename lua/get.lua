-- get.lua: read one job and where it is (read only).
-- KEYS[1] jobs hash   KEYS[2] due zset   KEYS[3] active zset   KEYS[4] dead zset
-- KEYS[5] claims hash   KEYS[6] state hash
-- ARGV[1] id
-- returns: nil when there is no such job, else {record, claim, set, score, now_ms, state}
--   claim = the running attempt's claim token, -1 when not active;
--   set = 'due' | 'active' | 'dead' | 'none'; score = run-at, lease deadline or
--   time of death in ms (-1 with 'none'); state = the job's state entry, ''
--   when it has none (it overrides the record's attempts, max and last
--   error: see record.lua)
-- bound: one job; O(log N)

local id = ARGV[1]
local s = redis.call('HGET', KEYS[1], id)
if not s then return nil end
local now = now_ms()
local claim = tonumber(redis.call('HGET', KEYS[5], id) or '-1')
local st = redis.call('HGET', KEYS[6], id) or ''
local names = {'due', 'active', 'dead'}
for i = 2, 4 do
  local score = redis.call('ZSCORE', KEYS[i], id)
  if score then return {s, claim, names[i - 1], tonumber(score), now, st} end
end
return {s, claim, 'none', -1, now, st}
