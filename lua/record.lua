-- record.lua: the job record codec and the helpers scripts share. Not a
-- script of its own: the script layer (worker/internal/script) ships each
-- script with the definitions below that it names, declared local on its
-- first line (see doc.go). Each definition is top level: "function name(" or
-- "NAME = ", with its comment above it.
--
-- A job is a record, a state entry once it has one, and a claim entry while
-- it runs:
--   jobs[id]    = "c3;<attempts>;<max>;<timeout_ms>;<enqueued_ms>;<errlen>;" .. err .. payload
--                 or, for a job with headers (enqueue.lua),
--                 "c4;<attempts>;<max>;<timeout_ms>;<enqueued_ms>;<errlen>;<hdrlen>;"
--                 .. err .. headers .. payload: the headers section is read
--                 by Go only (store/headers.go); scripts skip it. Versions
--                 before headers take a c4 record for a corrupt one.
--                 written once, by enqueue (or fire), and never rewritten:
--                 attempts 0, errlen 0. Only records written by versions
--                 before the state hash carry attempts and an error here.
--   state[id]   = "<attempts>;<max>;" .. err: the part of a job that changes.
--                 Retry, recover and requeue write it instead of the record,
--                 so no script but claim, get and deadlist (which return the
--                 payload) ever reads or copies a payload. When present it
--                 overrides the record's attempts, max and error. It is absent
--                 while the record's header says all there is to say; claim
--                 writes it for a record whose header is not the fresh
--                 default "c3;0;0;" (a job with its own max attempts, or a
--                 record of an older version), so that a job claimed by this
--                 version has a state entry or a header of 0 attempts and
--                 the queue's max: recover and retry never need the header.
--                 Ack, cancel, purge and trim delete it with the record
--                 (complete keeps both, for a job its queue retains);
--                 enqueue and fire delete one left behind (by an older
--                 version) when they write a new record under its id.
--   claims[id]  = "<token>@<process>" [.. "\n<percent>;<ms>;" .. message]:
--                 the claim token of the running
--                 attempt and the id of the process that claimed it (the
--                 Daemon's ID, claim.lua's ARGV[6]); present exactly while
--                 id is in active. Values written by versions before the
--                 process was recorded, and claims of callers that name no
--                 process, are the bare "<token>": every reader takes the
--                 token before the '@' (held, claim_token), so both live side
--                 by side during a rolling upgrade. The process rides in the
--                 value the claim writes anyway, so recording it costs the
--                 claim no command, and it leaves with the claim (no other
--                 key to clean up); the cost is one string.sub per job in
--                 held, and the process id's bytes per running job.
--   claims['']  = the last token handed out in the queue (ids are never
--                 empty). Each claim call takes one token for every job it
--                 claims: max(claims[''] + 1, the Redis clock in µs). A job is
--                 claimed at most once per call, so an (id, token) pair is
--                 never used twice in the queue, even when Redis loses recent
--                 writes (a crash under appendfsync everysec, an asynchronous
--                 failover, a restore) and claims[''] rolls back with them:
--                 lost writes cannot roll the clock back, so a token handed
--                 out before the loss is below every token handed out after
--                 it. This assumes the Redis clock never steps back by more
--                 than the time that was lost, and that after a failover the
--                 new master's clock is not behind the old one's by more
--                 than the replication lag plus the failover's own time.
--                 Tokens stay below 2^53 (exact in a Lua double) until the
--                 year 2255. A stale worker can therefore never match a later
--                 claim, not even of a job enqueued again under the same id.
-- attempts counts attempts spent and ended (failed, or lease expired); a
-- running attempt is attempts+1. Snoozes and shutdown hand-backs end an
-- attempt without spending it. max is the job's own max attempts, 0 = the
-- queue's. The hot paths (claim, ack, extend, snooze) never decode or
-- rewrite a record, and the payload is never parsed, only copied.
--
-- Slow paths, for data written by versions before the state hash (their
-- claim tokens came from a counter: 1, 2, 3, ..., below 10^15):
--   - recover decodes the record's header for a job without a state entry
--     whose claim token is below 10^15 (claimed by such a version, so its
--     header was not migrated);
--   - requeue decodes the record's header for a dead job without a state
--     entry (it died under such a version, or was a corrupt record wrapped
--     by claim).
-- Both read the whole record, once per job: state written since keeps them
-- off that path. While processes of both versions serve a queue, an older
-- process's retries, recoveries and requeues write the header, which the
-- newer ones no longer read once a state entry exists: a job may run more
-- attempts than its max until the older processes are gone.
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

-- rec_decode returns the parsed header, or nil when s is not a record (a
-- c4 record's error text and headers running past its end included, as
-- store.DecodeRecord refuses them). Numeric fields are limited to 15 digits
-- so they survive a double.
function rec_decode(s)
  local v, attempts, max, timeout, enq, errlen, pos =
    string.match(s, '^c([34]);(%d+);(%d+);(%d+);(%d+);(%d+);()')
  if not v then return nil end
  local hdrlen = '0'
  if v == '4' then
    -- a record with headers: one more field, the headers' length
    hdrlen, pos = string.match(s, '^(%d+);()', pos)
    if not hdrlen then return nil end
  end
  if #attempts > 15 or #max > 15 or #timeout > 15 or #enq > 15 or #errlen > 15 or #hdrlen > 15 then return nil end
  local n = tonumber(errlen)
  if pos + n + tonumber(hdrlen) - 1 > #s then return nil end
  return {
    attempts = tonumber(attempts), max = tonumber(max), timeout = timeout, enq = enq,
    err = string.sub(s, pos, pos + n - 1),
  }
end

-- st_decode returns the attempts, max and error of a state entry, or nil
-- when st is not one. Numeric fields are limited to 15 digits, as in
-- rec_decode.
function st_decode(st)
  local attempts, max, pos = string.match(st, '^(%d+);(%d+);()')
  if not attempts or #attempts > 15 or #max > 15 then return nil end
  return tonumber(attempts), tonumber(max), string.sub(st, pos)
end

-- st_encode builds a state entry.
function st_encode(attempts, max, err)
  return string.format('%d;%d;', attempts, max) .. err
end

-- CANCELLED is the last error of a job cancelled while it ran (cancel.lua);
-- extend.lua reads it to tell the worker why its lease is gone.
CANCELLED = 'cancelled'

-- OLD_TOKEN: claim tokens below it were handed out by versions before the
-- state hash, from a counter (see the header); tokens of this version are
-- the Redis clock in µs, above it since 2001.
OLD_TOKEN = 1e15

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

-- ms_str formats an integer below 2^53 (a time in ms or µs, a claim token)
-- as a decimal string.
function ms_str(ms)
  return string.format('%d', ms)
end

-- next_token returns the claim token for a claim call at now_us (the Redis
-- clock in µs): above the last one handed out, claims[''], and never below
-- the clock (see the header). The caller stores it back in claims[''].
function next_token(claims, now_us)
  return math.max((tonumber(redis.call('HGET', claims, '')) or 0) + 1, now_us)
end

-- layout_bad checks a layout's arguments (queue_set.lua, queue_copy.lua):
-- n partitions (1..64) and prev, the earlier numbers still draining ("4,2"
-- or ""). It returns what is wrong, or nil.
function layout_bad(n, prev)
  if not string.match(n, '^%d+$') or #n > 2 or tonumber(n) < 1 or tonumber(n) > 64 then
    return 'partitions must be 1 to 64'
  end
  if #prev > 200 or not string.match(prev, '^[%d,]*$') then return 'prev must be numbers separated by commas' end
  return nil
end

-- field_set writes value into field f of hash k, or deletes the field when
-- value is none (its default, which an absent field reads as).
function field_set(k, f, value, none)
  if value == none then redis.call('HDEL', k, f) else redis.call('HSET', k, f, value) end
end

-- pause_set sets (on) or deletes the queue's paused flag and announces a
-- change on its wake channel: "paused", or on resume the Redis clock in ms
-- (a wake-up for due jobs). It returns whether the flag changed.
function pause_set(paused, on, channel)
  if on then
    if not redis.call('SET', paused, '1', 'NX') then return false end
    announce(channel, 'paused')
  else
    if redis.call('DEL', paused) == 0 then return false end
    announce(channel, string.format('%d', now_ms()))
  end
  return true
end

-- share_set writes share ("<i>;<m>"), a partition's share of its queue's
-- rate limit, into the partition's settings hash k (queue_set.lua,
-- queue_copy.lua), and keeps the share it replaces in share_was with the
-- time it stopped applying ("<i>;<m>;<ms>", newest first, at most 8); a
-- partition that had none had absent ("0;0": nothing, for a partition a
-- layout adds; nil: the whole limit, for partition 0 of a queue never
-- split), and a fresh one (a layout just added it: what it had before an
-- earlier layout dropped it means nothing) had nothing too. claim.lua
-- takes the smallest share of the last window of the limit, so a share
-- grows only a window after a layout changed, once the claims the other
-- partitions made under the old layout have left it.
function share_set(k, share, absent, fresh)
  local had = redis.call('HGET', k, 'share')
  if had == share and not fresh then return end
  redis.call('HSET', k, 'share', share)
  local old = had or absent
  if fresh then old = '0;0' end
  if not old then return end
  local list, n = old .. ';' .. string.format('%d', now_ms()), 1
  for e in string.gmatch(redis.call('HGET', k, 'share_was') or '', '[^,]+') do
    if n >= 8 then break end
    list, n = list .. ',' .. e, n + 1
  end
  redis.call('HSET', k, 'share_was', list)
end

-- head_ms returns the score of the earliest due job, or nil.
function head_ms(due)
  local h = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
  if h[2] then return tonumber(h[2]) end
  return nil
end

-- wake publishes score on channel when it is earlier than the previous head,
-- so idle workers sleeping until that head wake up and re-plan. It uses
-- sharded pub/sub (SPUBLISH, Redis 7): on a Cluster only the node that
-- serves the queue's slot carries the message, where PUBLISH goes to every
-- node. A server without it (Redis 6, the embedded store of courier dev)
-- gets PUBLISH; the subscribers choose the same way (store/wake.go).
function wake(channel, prev_head, score)
  if score ~= nil and (prev_head == nil or score < prev_head) then
    announce(channel, string.format('%d', score))
  end
end

-- announce sends msg on channel with SPUBLISH, or PUBLISH on a server that
-- does not know it (see wake).
function announce(channel, msg)
  local r = redis.pcall('SPUBLISH', channel, msg)
  if type(r) == 'table' and r.err then
    if not string.find(string.lower(r.err), 'unknown', 1, true) then error(r) end
    redis.call('PUBLISH', channel, msg)
  end
end

-- pairs_from reads ARGV[from..last] (last: #ARGV when nil) as (id, claim)
-- pairs, at most limit, and
-- returns the ids and claims as two lists, or an error reply. An id may
-- repeat: callers count what Redis reports removed, never the pairs. Each
-- distinct claim is checked once: the jobs of one claim call share its
-- token, and matching a 16-digit token against a pattern costs more than
-- the rest of an ack.
function pairs_from(from, limit, last)
  last = last or #ARGV
  local n = last - from + 1
  if n % 2 ~= 0 then return redis.error_reply('ERR courier: id/claim pairs expected') end
  if n / 2 > limit then
    return redis.error_reply('ERR courier: at most ' .. limit .. ' jobs per call')
  end
  local ids, toks, checked = {}, {}, {}
  local k = 0
  for i = from, last, 2 do
    local tok = ARGV[i + 1]
    if not checked[tok] then
      if not string.match(tok, '^%d+$') then
        return redis.error_reply('ERR courier: claim must be a number')
      end
      checked[tok] = true
    end
    k = k + 1
    ids[k] = ARGV[i]
    toks[k] = tok
  end
  return ids, toks
end

-- held returns, for each id, whether it is active under the given claim:
-- its claims value is the token, bare or followed by '@' and the process
-- (and the progress, see extend.lua); and the claims values it read.
function held(claims, ids, toks)
  local cur = redis.call('HMGET', claims, unpack(ids))
  local ok = {}
  for i = 1, #ids do
    local c, t = cur[i], toks[i]
    ok[i] = c == t or (c ~= false and string.byte(c, #t + 1) == 64 and string.sub(c, 1, #t) == t)
  end
  return ok, cur
end

-- claim_token splits a claims value into the claim token (a string of
-- digits) and the claiming process ('' when it names none); nil for
-- false/nil.
function claim_token(v)
  if not v then return nil, '' end
  local at = string.find(v, '@', 1, true)
  if not at then return v, '' end
  return string.sub(v, 1, at - 1), string.sub(v, at + 1)
end

-- fenced tells whether field still holds the queue's leader lock, the
-- Redisson-layout hash at key. Carrier scripts check it first, in the same
-- call and slot as their writes, so a deposed leader changes nothing.
function fenced(key, field)
  return field ~= '' and redis.call('HEXISTS', key, field) == 1
end

-- LAG_BUCKETS is the number of the history's lag buckets, l0 to l11
-- (worker.LagBuckets).
LAG_BUCKETS = 12

-- lag_bucket returns the history bucket of a lag in ms, 0 to 11 (up to 1,
-- 5, 10, 50, 100, 500, 1000, 5000, 10000, 60000 and 300000 ms, and above:
-- worker.LagBounds; a bound belongs to its own bucket), and the bucket's
-- lower bound (exclusive), so a caller bucketing many lags looks up a
-- bucket only when a lag falls below it. Comparisons only: no table is
-- built on claim's path.
function lag_bucket(lag)
  if lag <= 100 then
    if lag <= 1 then return 0, -math.huge end
    if lag <= 5 then return 1, 1 end
    if lag <= 10 then return 2, 5 end
    if lag <= 50 then return 3, 10 end
    return 4, 50
  end
  if lag <= 500 then return 5, 100 end
  if lag <= 1000 then return 6, 500 end
  if lag <= 5000 then return 7, 1000 end
  if lag <= 10000 then return 8, 5000 end
  if lag <= 60000 then return 9, 10000 end
  if lag <= 300000 then return 10, 60000 end
  return 11, 300000
end

-- history_add adds n to the count kind of the minute of now (ms) in a
-- queue's history: the hash hkey, field "<minute>:<kind>" (minute =
-- floor(now / 60000); kind 's' succeeded, 'r' retried, 'd' died, 'l0' to
-- 'l11' started, by lag), and lists the minute in the index zset ikey
-- (score = member = minute) when the field is new, about once a minute.
-- Scripts call it after their work, and every write goes through
-- redis.pcall: a history that cannot be written (a key of another type)
-- never fails a script nor changes its reply. The increment goes as a
-- string (see the header: Redis formats numbers slowly).
function history_add(hkey, ikey, now, kind, n)
  if n <= 0 then return end
  local m, by = string.format('%d', math.floor(now / 60000)), '1'
  if n ~= 1 then by = string.format('%d', n) end
  if redis.pcall('HINCRBY', hkey, m .. ':' .. kind, by) == n then
    redis.pcall('ZADD', ikey, 'NX', m, m)
  end
end
