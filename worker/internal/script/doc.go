// Package script is Courier's one script layer: every Lua script of package
// lua is declared here once — its name, its source, and whether a call may
// be sent again when its outcome is unknown — and that declaration is how
// the script runs, is timed and is retried. Package store (the job scripts)
// and package worker/lock (the lock scripts) are its only users; no other
// package imports lua.
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
// # Retries
//
// A script's Repeat is the one place where Courier decides whether a call
// may be sent again after a network error, when Redis may or may not have
// run it. Once scripts (every script that writes and is not idempotent)
// are never resent by the client: the caller learns that the outcome is
// unknown, and the scripts are written so that the caller's own next step
// (a recovery, a retried ack carrying the same claim token) is safe.
// Resend scripts (the read-only ones, and lock_renew, which only resets a
// TTL) are marked retryable for rueidis.
//
// # Metrics
//
// Every Exec and ExecMulti is timed once, as courier_redis_script_seconds
// {script=<name>} (the NOSCRIPT fallback included), and a failed call
// counts in courier_redis_errors_total{op=<name>}. Conn's plain commands
// (Do, DoMulti, Receive) count their failures under the lower-case command
// name. Names come from the declarations, never from hashing what is sent.
//
// # Sources
//
// lua/record.lua holds the helpers scripts share. A script is sent with the
// helpers it names (and the helpers those name), declared local on its
// first line (its second, after a "#!lua" line) and defined after its body,
// which runs as a function called at the end: the script's own lines keep
// their numbers in Redis's error messages, and a script that needs no
// helper is sent as its file reads.
package script
