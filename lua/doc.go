// Package lua holds Courier's Redis scripts, one file per script, embedded
// into the binary (Files). It has no logic: the script layer,
// worker/internal/script, declares each script once (its name, its source,
// whether a call may be sent again after an unknown outcome, and whether it
// runs when Redis is out of memory), includes the shared helpers, adds the
// flags line and runs it.
//
// # A script's file
//
// A script file opens with a header of comments that is its contract:
//
//	-- <name>.lua: what it does, in one line or a few.
//	-- KEYS[1] … : every key it touches, all of one queue's hash tag
//	-- ARGV[1] … : every argument, with its unit (ms, µs, bytes)
//	-- returns: the reply, in the shape below
//	-- bound: how much work one call may do (a LIMIT, a batch size)
//
// lua_test.go checks that every script has these lines. A file has no
// "#!lua" flags line of its own: the script layer puts one in place of the
// header's first line for the scripts its catalog declares AllowOOM, so
// line numbers stay true.
//
// # Shared helpers
//
// record.lua, options.lua, paging.lua and rate.lua are not scripts: record.lua holds
// the job record codec and small helpers (now_ms, head_ms, wake,
// pairs_from, held, fenced, …), options.lua those of priorities and unique
// jobs (dues, take_levels, uniq_holder, finished, …), paging.lua those of
// reading a sorted set from a cursor (rank_after), rate.lua those of a
// sliding-window rate limit (rate_read, rate_note); each a top-level
// "function name(" or "NAME = " definition, and no name is defined twice
// across the four. A script calls them by
// name; the script layer ships a script with only the helpers it names (and
// theirs), declared local on the script's first line and defined after the
// script, whose body runs as a function called at the end. A script's own
// lines therefore keep their numbers in Redis's error messages, and a
// script that needs no helper is sent as its file reads (behind its flags
// line, if it has one).
//
// # Rules every script keeps
//
//   - Time comes from redis.call('TIME') (now_ms), never from an argument.
//   - Every argument is checked before the first write: Lua does not roll
//     back. A bad argument is an error reply "ERR courier: <what is wrong>".
//   - Bounded work per call: at most 1,000 jobs, or a LIMIT, per call.
//   - Safe to run twice: a reply can be lost, and the caller may not know
//     whether the call ran. Writes that act on a running job carry its claim
//     token and do nothing when it no longer matches.
//   - Every key the script touches is passed in KEYS; pub/sub channels, which
//     are not keys, travel in ARGV. A script sent with a flags line may
//     touch nothing else: Redis 7 holds it to its declared keys' slot.
//   - Out of memory: whether a script runs when Redis has reached
//     maxmemory is declared in the script layer's catalog, and the rule,
//     with what it asks of a DenyOOM script's first write, is written in
//     that package's doc ("Out of memory"). Calls Redis refuses without
//     running them (TRYAGAIN, LOADING, …) are resent there ("Retries").
//
// # Replies
//
// One convention for all scripts:
//
//   - Success is an integer, or a flat array of integers and strings (never
//     nested): counts, per-item flags (1 = done, 0 = skipped, in the order of
//     the items asked for), or a fixed head followed by repeated groups, as
//     the header says. Times are integers in ms since the epoch on the Redis
//     clock (µs where the header says so).
//   - nil means "there is no such thing" (get: no job; lock_acquire: taken;
//     lock_release: not held).
//   - A negative code in place of a count or flag says why nothing changed:
//     -1 always means the caller is not the queue's leader (the fenced
//     carrier scripts: recover, trim, history_trim, fire), and the header lists the others
//     (cancel: -2 dead, -3 completed, -4 cancelled; fire: -2 too early; claim: next_ms -2,
//     the queue is paused).
//   - An error reply is a bad call, never a state: "ERR courier: …", sent
//     before any write.
package lua
