-- rate.lua: the sliding-window rate limit that claim.lua applies to a
-- queue and to a job key, and limiter_take.lua to a named limit. Not a script of
-- its own: the script layer ships each script with the definitions it
-- names, as it ships record.lua's (see doc.go).
--
-- A window is a zset with one entry per take of k > 0 units (jobs, or a
-- limiter's calls): score = the take's time in µs (never below the previous
-- entry's, so scores follow the order of the takes even if the Redis clock
-- steps back), member = "<cumulative>:<k>", where cumulative (16 digits,
-- zero-padded, so equal scores sort by it too) counts every unit taken
-- through the key so far. The units taken within the window are then
-- last.cumulative - first.cumulative + first.k, read from the two ends of
-- the zset. Entries at or below now - window have left it; at most 1000
-- are dropped per call, and any left over still count, which only takes
-- less. The key expires a window after its newest entry, so a limit that
-- is not used leaves nothing behind. O(log E + 1000) per read for E
-- entries, never a scan of the window.

-- rate_args checks a limit's arguments, n and ms as strings: absent, ''
-- or '0' (both) = no limit. It returns n and ms as numbers (0, 0 for none),
-- or nil and what is wrong.
function rate_args(n_s, ms_s)
  n_s, ms_s = n_s or '', ms_s or ''
  if n_s == '' or n_s == '0' then
    if ms_s ~= '' and ms_s ~= '0' then return nil, 'rate_ms without rate_n' end
    return 0, 0
  end
  if not string.match(n_s, '^%d+$') or #n_s > 7 or tonumber(n_s) > 1000000 then
    return nil, 'rate_n must be 1 to 1000000'
  end
  -- 3.2e10 ms is a year: the window in µs stays an exact double.
  if not string.match(ms_s, '^%d+$') or #ms_s > 11 or tonumber(ms_s) < 1 or tonumber(ms_s) > 31622400000 then
    return nil, 'rate_ms must be 1 to 31622400000'
  end
  return tonumber(n_s), tonumber(ms_s)
end

-- rate_read reads the window of ms milliseconds held by rk at now_us (the
-- Redis clock, µs), dropping up to 1000 entries that left it. It returns
-- the units taken within the window, the newest entry's cumulative count
-- (0 when there is none), the oldest entry's score and the newest's (µs,
-- nil when there is none); or nil when rk holds an entry that is not a
-- rate entry, having written nothing.
function rate_read(rk, now_us, ms)
  local cutoff = ms_str(now_us - ms * 1000)
  local gone = math.min(redis.call('ZCOUNT', rk, '-inf', cutoff), 1000)
  local first = redis.call('ZRANGE', rk, gone, gone, 'WITHSCORES')
  local used, cum, f, l = 0, 0, nil, nil
  if first[1] then
    local last = redis.call('ZRANGE', rk, -1, -1, 'WITHSCORES')
    local c1, k1 = string.match(first[1], '^(%d+):(%d+)$')
    local cl = string.match(last[1], '^(%d+):%d+$')
    if not c1 or not cl then return nil end
    cum, f, l = tonumber(cl), tonumber(first[2]), tonumber(last[2])
    used = cum - tonumber(c1) + tonumber(k1)
  end
  if gone > 0 then redis.call('ZREMRANGEBYRANK', rk, 0, gone - 1) end
  return used, cum, f, l
end

-- rate_note records a take of k > 0 units in the window of ms milliseconds
-- held by rk, at now_us, after a rate_read that returned cum and last. It
-- returns the entry's score (µs).
function rate_note(rk, now_us, ms, cum, last, k)
  local score = math.max(now_us, last or now_us)
  redis.call('ZADD', rk, ms_str(score), string.format('%016d:%d', cum + k, k))
  -- the newest entry leaves the window at score + ms; round up to ms
  redis.call('PEXPIRE', rk, ms_str(ms + math.ceil((score - now_us) / 1000) + 1))
  return score
end
