-- limiter_take.lua: take k units of a named rate limit (worker/limiter):
-- at most n units in any window of window_ms, by all callers together. The
-- window is rate.lua's (rate_args, rate_read, rate_note), the same sliding
-- window claim.lua keeps for a queue's rate limit: exact, never a bucket.
-- KEYS[1] rate zset (rate.lua's window: <cumulative>:<k> -> take time, µs)
-- ARGV[1] n: units per window (1 to 1000000)
-- ARGV[2] window_ms (1 to 31622400000, a year)
-- ARGV[3] k: units to take at once (1 to n)
-- returns: {taken, now_ms, at_ms, left}
--   taken 1: the k units were taken; at_ms is now_ms. taken 0: the window
--   has fewer than k units left and nothing was taken; at_ms is when it
--   will have k (when the oldest takes that must leave it have left:
--   exact, as nothing returns units to a window early). left: the units
--   left in the window after the call (0 when callers with a larger n used
--   more). now_ms is the Redis clock.
-- bound: O(log E + 1000) for the E <= n entries of the window (rate.lua's
--   read), plus, when refused, a binary search for at_ms: O(log² E).
--
-- Callers of one name should pass the same window: a shorter one drops
-- entries (and sets an expiry) that a longer one still counts. The first
-- write is rate_read's drop of entries that left the window (deletes
-- only), or rate_note's ZADD (refused out of memory: DenyOOM).

local n, ms = rate_args(ARGV[1], ARGV[2])
if not n then return redis.error_reply('ERR courier: ' .. ms) end
if n == 0 then return redis.error_reply('ERR courier: rate_n must be 1 to 1000000') end
local k = tonumber(ARGV[3])
if not string.match(ARGV[3] or '', '^%d+$') or not k or k < 1 or k > n then
  return redis.error_reply('ERR courier: k must be 1 to rate_n')
end

local rk = KEYS[1]
local now, now_us = now_ms()
local used, cum, first, last = rate_read(rk, now_us, ms)
if not used then return redis.error_reply('ERR courier: the rate key holds an entry that is not a rate entry') end
if used + k <= n then
  rate_note(rk, now_us, ms, cum, last, k)
  return {1, now, now, n - used - k}
end

-- Refused: the oldest entries whose units must leave the window, need in
-- all, leave it in order; find the newest of them by rank (cumulative
-- counts grow with the rank) and answer when it leaves.
local need = used + k - n
local function entry(rank)
  local e = redis.call('ZRANGE', rk, rank, rank, 'WITHSCORES')
  local c, u = string.match(e[1] or '', '^(%d+):(%d+)$')
  return tonumber(c), tonumber(u), tonumber(e[2])
end
local c0, u0 = entry(0)
local at_us = first
if c0 then
  local lo, hi = 0, redis.call('ZCARD', rk) - 1
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local c = entry(mid)
    if not c then break end
    if c - c0 + u0 >= need then hi = mid else lo = mid + 1 end
  end
  local _, _, score = entry(lo)
  at_us = score or first
end
local at = math.max(math.ceil(at_us / 1000) + ms, now + 1)
return {0, now, at, math.max(n - used, 0)}
