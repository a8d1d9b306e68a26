-- paging.lua: the helpers of reading a sorted set a page at a time from a
-- cursor (list.lua, deadlist.lua). Not a script of its own: the script
-- layer (worker/internal/script) ships each script with the definitions it
-- names (see doc.go).

-- bytes_after reports whether a sorts after b as a sorted set orders
-- members: by bytes, the shorter first on a tie. Lua's own < follows the
-- server's collation locale (Redis calls setlocale(LC_COLLATE, "")), not
-- bytes.
function bytes_after(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x > y end
  end
  return #a > #b
end

-- rank_at returns the rank of the first member of the zset key strictly
-- after the position (score, id) in the set's order (score, then member
-- bytes), whether or not id is still in the set at that score, and whether
-- it is (then that rank is id's own plus one). score is a string of
-- digits. O(log N): ZSCORE and ZRANK, or ZSCORE, two ZCOUNTs and a binary
-- search over the members sharing the score.
function rank_at(key, score, id)
  local sc = redis.call('ZSCORE', key, id)
  if sc and tonumber(sc) == tonumber(score) then
    return redis.call('ZRANK', key, id) + 1, true
  end
  -- The members with exactly this score hold ranks [lo, hi), by bytes: find
  -- the first of them after id (hi when none).
  local lo = redis.call('ZCOUNT', key, '-inf', '(' .. score)
  local hi = redis.call('ZCOUNT', key, '-inf', score)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if bytes_after(redis.call('ZRANGE', key, mid, mid)[1], id) then hi = mid else lo = mid + 1 end
  end
  return lo, false
end

-- rank_after returns the rank of the first member of the zset key strictly
-- after the position (score, id), as rank_at, alone: where a page resumes
-- after its cursor.
function rank_after(key, score, id)
  return (rank_at(key, score, id))
end

-- rank_before returns the rank of the last member of the zset key strictly
-- before the position (score, id) in the set's order (score, then member
-- bytes), -1 when none is, whether or not id is still in the set at that
-- score: where a page of a set read from its end (newest first) resumes
-- after its cursor. O(log N), as rank_at.
function rank_before(key, score, id)
  local r, found = rank_at(key, score, id)
  if found then return r - 2 end
  return r - 1
end
