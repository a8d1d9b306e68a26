-- record.lua: the job record codec, prepended to every script that reads or
-- writes records (see lua.go). Not a script of its own.
--
-- A record is one string:
--   "c1;<claim>;<attempt>;<max>;<timeout_ms>;<enqueued_ms>;<errlen>;" .. err .. payload
-- claim:   claims so far; the claim token (bumped by every claim, never reset)
-- attempt: attempts spent (claim bumps it; snooze and shutdown give it back)
-- max:     max attempts, 0 = the queue's default
-- The payload is never parsed: scripts copy it, they do not decode it.

-- rec_decode returns the parsed header, or nil when s is not a record.
-- Numeric fields are limited to 15 digits so they survive a double.
local function rec_decode(s)
  local claim, attempt, max, timeout, enq, errlen, pos =
    string.match(s, '^c1;(%d+);(%d+);(%d+);(%d+);(%d+);(%d+);()')
  if not claim then return nil end
  if #claim > 15 or #attempt > 15 or #max > 15 or #timeout > 15 or #enq > 15 or #errlen > 15 then
    return nil
  end
  local n = tonumber(errlen)
  if pos + n - 1 > #s then return nil end
  return {
    claim = tonumber(claim), attempt = tonumber(attempt), max = tonumber(max),
    timeout = timeout, enq = enq, err = string.sub(s, pos, pos + n - 1),
    body = pos + n, -- index of the payload's first byte
  }
end

-- rec_claim returns only the claim token of a record, or nil.
local function rec_claim(s)
  local claim = string.match(s, '^c1;(%d+);')
  if claim == nil or #claim > 15 then return nil end
  return tonumber(claim)
end

-- rec_encode rebuilds a record from a decoded header h (with h.err possibly
-- changed) and the original string s, whose payload it copies.
local function rec_encode(h, s)
  return 'c1;' .. string.format('%d', h.claim) .. ';' .. string.format('%d', h.attempt) .. ';' ..
    string.format('%d', h.max) .. ';' .. h.timeout .. ';' .. h.enq .. ';' .. #h.err .. ';' ..
    h.err .. string.sub(s, h.body)
end

-- now_ms returns the Redis server's clock in whole milliseconds, and in µs.
local function now_ms()
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  return math.floor(us / 1000), us
end

-- head_ms returns the score of the earliest due job, or nil.
local function head_ms(due)
  local h = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
  if h[2] then return tonumber(h[2]) end
  return nil
end

-- wake publishes score on channel when it is earlier than the previous head,
-- so idle workers sleeping until that head wake up and re-plan.
local function wake(channel, prev_head, score)
  if score ~= nil and (prev_head == nil or score < prev_head) then
    redis.call('PUBLISH', channel, string.format('%d', score))
  end
end

-- tokens checks ARGV[from..] as (id, claim) pairs and returns their count.
local function tokens(from, limit)
  local n = #ARGV - from + 1
  if n % 2 ~= 0 then return redis.error_reply('ERR courier: id/claim pairs expected') end
  n = n / 2
  if n > limit then return redis.error_reply('ERR courier: at most ' .. limit .. ' jobs per call') end
  for i = from + 1, #ARGV, 2 do
    if not tonumber(ARGV[i]) then return redis.error_reply('ERR courier: claim must be a number') end
  end
  return n
end

