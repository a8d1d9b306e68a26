// Package script is Courier's one script layer: every Lua script of package
// lua is declared here once — its name, its source, whether a call may be
// sent again when its outcome is unknown, and whether it runs when Redis
// is out of memory — and that declaration is how the script runs, is timed
// and is retried. Package store (the job scripts), package worker/lock
// (the lock scripts) and package worker/limiter (the limiter scripts) are
// its only users; no other package imports lua.
//
// # Running a script
//
// A Conn is a Redis client with the metrics its calls are recorded in.
// Script.Exec runs one call, Script.ExecMulti several in one round trip
// (rueidis pipelines the commands of each cluster node together). Each
// call goes as EVALSHA; a call answered NOSCRIPT (Redis did not run it)
// goes again as EVAL, which also caches the script for the next call.
// rueidis's Lua.ExecMulti is not used: it sends SCRIPT LOAD to every node
// before each batch, doubling a hot path's round trips.
//
// Script.ExecDedicated runs calls as ExecMulti does on a connection of
// their own, followed in the same round trip by plain commands that must
// see the calls' writes on their connection: WAIT and WAITAOF, which
// count the replicas that have a connection's writes (a replicated
// enqueue, worker.Durability).
//
// # Retries
//
// This package is the one place where Courier decides whether a script
// call is sent again. There are two cases.
//
// After a network error Redis may or may not have run the call. A
// script's Repeat decides: Once scripts (every script that writes and is
// not idempotent) are never resent by the client: the caller learns that
// the outcome is unknown, and the scripts are written so that the caller's
// own next step (a recovery, a retried ack carrying the same claim token)
// is safe. Resend scripts (the read-only ones; forget and pause, whose
// second run finds nothing more to do; and lock_renew, which only resets a
// TTL) are marked retryable for rueidis.
//
// When Redis refuses a call with an error reply that says it did not run
// it, for a cause that passes by itself — TRYAGAIN (the keys' slot is
// migrating), LOADING (the server loads its data set), BUSY (another
// script runs long), MASTERDOWN, CLUSTERDOWN — Exec sends the call again,
// whatever its Repeat, after 10 ms, doubling up to 250 ms, until Redis
// runs it or the caller's context ends (the caller then gets the last
// refusal). ExecMulti sends again only the calls that were refused.
// rueidis itself resends these only for retryable commands, and follows
// MOVED and ASK for every command. Refusals that last until an operator
// acts (OOM, READONLY, NOREPLICAS, MISCONF) are returned at once.
//
// # Out of memory
//
// This is the one statement of the rule; the catalog (scripts.go) applies
// it to each script.
//
// With maxmemory and the noeviction policy Courier asks for, a full Redis
// refuses a script without flags at its first write that may grow memory
// (ZADD, HSET, HINCRBY…), but not one whose first write deletes: renewing
// a lease (extend) was refused while claims and acks went on, so running
// jobs lost their leases and ran again, and leaders could not be elected.
// So every script is declared one of two ways:
//
//   - AllowOOM: a script that only moves, renews or deletes what exists,
//     so that memory grows by a few bytes per job at most. It is sent
//     behind the Redis 7 flags line "#!lua flags=allow-oom" and runs
//     whole: leases are renewed, outcomes stored and leaders elected while
//     Redis is full.
//   - DenyOOM: a script that adds data (a job) goes without flags, so that
//     Redis refuses it whole and the producer learns it
//     (worker.ErrRedisOOM). Its first write must therefore be one that may
//     grow memory (HSET, ZADD): after a first delete Redis lets the whole
//     script run. The read-only scripts are DenyOOM too: they never write,
//     so Redis never refuses them.
//
// A flags line also makes Redis hold a script to its declared keys (all of
// one hash slot in a cluster); TIME and PUBLISH are allowed as before.
//
// A server that does not know script flags (the embedded store of courier
// dev, Redis before 7.0) refuses the flags line as a Lua syntax error. The
// first such refusal on a Conn makes it send the scripts without their
// flags line from then on.
//
// # Metrics
//
// Every Exec and ExecMulti (not ExecDedicated, whose WAIT would be most
// of the time) is timed once, as courier_redis_script_seconds
// {script=<name>} (the NOSCRIPT fallback and the resends included), and a
// call that failed in the end counts in courier_redis_errors_total
// {op=<name>}. Each refusing reply counts in courier_redis_refused_total
// {op=<name>,reason=<oom|loading|tryagain|…>}, resent or not. Conn's plain
// commands (Do, DoMulti, Receive) count their failures and refusals under
// the lower-case command name; they are not resent here. Names come from
// the declarations, never from hashing what is sent.
//
// # Sources
//
// lua/record.lua holds the helpers scripts share. A script is sent with the
// helpers it names (and the helpers those name), declared local on its
// first line (its second, after a flags line) and defined after its body,
// which runs as a function called at the end. A flags line takes the
// place of the file's first line, a comment, since Redis counts it as
// line 1: the script's own lines keep their numbers in Redis's error
// messages, and a script that needs no helper is sent as its file reads
// (behind its flags line).
package script
