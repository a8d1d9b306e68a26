-- record.lua: the job record codec and helpers, prepended to every script
-- (see lua.go). Not a script of its own.
--
-- A job is two hash fields under its id:
--   jobs[id]   = "c2;<offset>;<max>;<timeout_ms>;<enqueued_ms>;<errlen>;" .. err .. payload
--   claims[id] = claims so far: the claim token, bumped by HINCRBY at every
--                claim, never reset (absent until the first claim)
-- attempts spent = claims - offset: a claim spends an attempt; a snooze or a
-- shutdown hand-back gives it back by raising offset; a requeue from dead sets
-- offset = claims. max is the job's own max attempts, 0 = the queue's.
-- The hot paths (claim, ack, extend) never decode or rewrite a record; the
-- payload is never parsed, only copied.

-- rec_ok tells whether s looks like a record (cheap; claim uses it).
local function rec_ok(s)
  return string.sub(s, 1, 3) == 'c2;'
end

-- rec_decode returns the parsed header, or nil when s is not a record.
-- Numeric fields are limited to 15 digits so they survive a double.
local function rec_decode(s)
  local offset, max, timeout, enq, errlen, pos =
    string.match(s, '^c2;(%d+);(%d+);(%d+);(%d+);(%d+);()')
  if not offset then return nil end
  if #offset > 15 or #max > 15 or #timeout > 15 or #enq > 15 or #errlen > 15 then return nil end
  local n = tonumber(errlen)
  if pos + n - 1 > #s then return nil end
  return {
    offset = tonumber(offset), max = tonumber(max), timeout = timeout, enq = enq,
    err = string.sub(s, pos, pos + n - 1),
    body = pos + n, -- index of the payload's first byte
  }
end

-- rec_encode rebuilds a record from a decoded header h (possibly changed) and
-- the original string s, whose payload it copies.
local function rec_encode(h, s)
  return 'c2;' .. string.format('%d', h.offset) .. ';' .. string.format('%d', h.max) .. ';' ..
    h.timeout .. ';' .. h.enq .. ';' .. #h.err .. ';' .. h.err .. string.sub(s, h.body)
end

-- rec_corrupt wraps bytes that are not a record into a valid record with
-- them as its payload, so a bad record can go to dead without losing data.
local function rec_corrupt(s, now)
  local err = 'decode: corrupt job record'
  return 'c2;0;0;0;' .. string.format('%d', now) .. ';' .. #err .. ';' .. err .. s
end

-- claims_of returns the claim count of id (0 before the first claim).
local function claims_of(claims, id)
  return tonumber(redis.call('HGET', claims, id) or '0')
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

-- pairs_from checks that ARGV[from..] holds (id, claim) pairs, at most limit,
-- and returns the ids and claims as two lists, or an error reply.
local function pairs_from(from, limit)
  local ids, toks = {}, {}
  if (#ARGV - from + 1) % 2 ~= 0 then return redis.error_reply('ERR courier: id/claim pairs expected') end
  for i = from, #ARGV, 2 do
    if not string.match(ARGV[i + 1], '^%d+$') then
      return redis.error_reply('ERR courier: claim must be a number')
    end
    ids[#ids + 1] = ARGV[i]
    toks[#toks + 1] = ARGV[i + 1]
  end
  if #ids > limit then return redis.error_reply('ERR courier: at most ' .. limit .. ' jobs per call') end
  return ids, toks
end

-- held returns, for each id, whether it is active under the given claim.
local function held(claims, active, ids, toks)
  local cur = redis.call('HMGET', claims, unpack(ids))
  local score = redis.call('ZMSCORE', active, unpack(ids))
  local ok = {}
  for i = 1, #ids do
    ok[i] = cur[i] == toks[i] and score[i] ~= false
  end
  return ok
end

