-- record.lua: the job record codec and the helpers scripts share. Not a
-- script of its own: the script layer (worker/internal/script) ships each
-- script with the definitions below that it names, declared local on its
-- first line (see doc.go). Each definition is top level: "function name(" or
-- "NAME = ", with its comment above it.
--
-- A job is a record, and a claim entry while it runs:
--   jobs[id]    = "c3;<attempts>;<max>;<timeout_ms>;<enqueued_ms>;<errlen>;" .. err .. payload
--   claims[id]  = the claim token of the running attempt; present exactly
--                 while id is in active
--   claims['']  = the queue's token sequence (ids are never empty): each
--                 claim call takes the next number and gives it to every job
--                 it claims. A job is claimed at most once per call, so an
--                 (id, token) pair is never used twice in the queue: a stale
--                 worker can never match a later claim, not even of a job
--                 enqueued again under the same id.
-- attempts counts attempts spent and ended (failed, or lease expired); a
-- running attempt is attempts+1. Snoozes and shutdown hand-backs end an
-- attempt without spending it. max is the job's own max attempts, 0 = the
-- queue's. The hot paths (claim, ack, extend, snooze) never decode or
-- rewrite a record, and the payload is never parsed, only copied.
-- Numbers handed to redis.call are formatted by Redis with "%.17g", which
-- costs more than the command itself: the hot paths pass strings built once
-- per call instead.

-- PIN is an entry kept in the active zset (score +inf) and the claims hash.
-- Small zsets and hashes are stored as listpacks, where finding or adding a
-- member scans the whole list; claim and ack touch every member they carry,
-- so a listpack makes them quadratic in the batch. An entry longer than 64
-- bytes makes Redis switch to a skiplist / hash table for good. PIN holds
-- spaces, so it is never a job id; nothing treats it as a job: recover looks
-- below +inf, and stats subtract it.
PIN = 'courier pin: keeps this key in its skiplist or hash table encoding; not a job'

-- pin makes sure the active zset and the claims hash hold PIN.
function pin(active, claims)
  redis.call('ZADD', active, 'NX', 'inf', PIN)
  redis.call('HSETNX', claims, PIN, '1')
end

-- rec_ok tells whether s looks like a record (cheap; claim uses it).
function rec_ok(s)
  local c, v, sep = string.byte(s, 1, 3)
  return c == 99 and v == 51 and sep == 59 -- 'c3;'
end

-- rec_decode returns the parsed header, or nil when s is not a record.
-- Numeric fields are limited to 15 digits so they survive a double.
function rec_decode(s)
  local attempts, max, timeout, enq, errlen, pos =
    string.match(s, '^c3;(%d+);(%d+);(%d+);(%d+);(%d+);()')
  if not attempts then return nil end
  if #attempts > 15 or #max > 15 or #timeout > 15 or #enq > 15 or #errlen > 15 then return nil end
  local n = tonumber(errlen)
  if pos + n - 1 > #s then return nil end
  return {
    attempts = tonumber(attempts), max = tonumber(max), timeout = timeout, enq = enq,
    err = string.sub(s, pos, pos + n - 1),
    body = pos + n, -- index of the payload's first byte
  }
end

-- rec_encode rebuilds a record from a decoded header h (possibly changed) and
-- the original string s, whose payload it copies.
function rec_encode(h, s)
  return 'c3;' .. string.format('%d', h.attempts) .. ';' .. string.format('%d', h.max) .. ';' ..
    h.timeout .. ';' .. h.enq .. ';' .. #h.err .. ';' .. h.err .. string.sub(s, h.body)
end

-- rec_corrupt wraps bytes that are not a record into a valid record with
-- them as its payload, so a bad record can go to dead without losing data.
function rec_corrupt(s, now)
  local err = 'decode: corrupt job record'
  return 'c3;0;0;0;' .. string.format('%d', now) .. ';' .. #err .. ';' .. err .. s
end

-- now_ms returns the Redis server's clock in whole milliseconds, and in µs.
function now_ms()
  local t = redis.call('TIME')
  local us = tonumber(t[1]) * 1000000 + tonumber(t[2])
  return math.floor(us / 1000), us
end

-- ms_str formats a time in ms (an integer below 2^53) as a decimal string.
function ms_str(ms)
  return string.format('%d', ms)
end

-- head_ms returns the score of the earliest due job, or nil.
function head_ms(due)
  local h = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
  if h[2] then return tonumber(h[2]) end
  return nil
end

-- wake publishes score on channel when it is earlier than the previous head,
-- so idle workers sleeping until that head wake up and re-plan.
function wake(channel, prev_head, score)
  if score ~= nil and (prev_head == nil or score < prev_head) then
    redis.call('PUBLISH', channel, string.format('%d', score))
  end
end

-- pairs_from reads ARGV[from..] as (id, claim) pairs, at most limit, and
-- returns the ids and claims as two lists, or an error reply. An id may
-- repeat: callers count what Redis reports removed, never the pairs.
function pairs_from(from, limit)
  local n = #ARGV - from + 1
  if n % 2 ~= 0 then return redis.error_reply('ERR courier: id/claim pairs expected') end
  if n / 2 > limit then
    return redis.error_reply('ERR courier: at most ' .. limit .. ' jobs per call')
  end
  local ids, toks = {}, {}
  local k = 0
  for i = from, #ARGV, 2 do
    if not string.match(ARGV[i + 1], '^%d+$') then
      return redis.error_reply('ERR courier: claim must be a number')
    end
    k = k + 1
    ids[k] = ARGV[i]
    toks[k] = ARGV[i + 1]
  end
  return ids, toks
end

-- held returns, for each id, whether it is active under the given claim.
function held(claims, ids, toks)
  local cur = redis.call('HMGET', claims, unpack(ids))
  local ok = {}
  for i = 1, #ids do
    ok[i] = cur[i] == toks[i]
  end
  return ok
end

-- fenced tells whether field still holds the queue's leader lock, the
-- Redisson-layout hash at key. Carrier scripts check it first, in the same
-- call and slot as their writes, so a deposed leader changes nothing.
function fenced(key, field)
  return field ~= '' and redis.call('HEXISTS', key, field) == 1
end
