package store

import "fmt"

// Keys names the Redis keys of one queue. Every key carries the queue's hash
// tag, so all of them live in one slot and every script runs on Redis Cluster.
type Keys struct {
	Jobs   string // hash: id → record
	Due    string // zset: id → run-at, ms
	Active string // zset: id → lease deadline, ms
	Dead   string // zset: id → time of death, ms
	Claims string // hash: id → claim token of a running job [+ "@" + its process]; '' → the last token handed out
	// State holds what changes of a job after its enqueue: "<attempts>;<max
	// attempts>;<last error>" (lua/record.lua). A job has an entry once it
	// failed, or was claimed with its own max attempts; it overrides the
	// record's header.
	State  string // hash: id → state entry
	Leader string // hash: the queue's leader lock (Redisson layout)
	// Rate is the queue's rate-limit window (lua/claim.lua): one entry per
	// claim call that took jobs, "<cumulative jobs>:<jobs>" → claim time in
	// µs. It exists only while a limited queue claimed within its window.
	Rate string // zset
	// Periodic holds, per schedule of the queue's periodic jobs, the time of
	// its last fire (ms), so a new leader goes on from there.
	Periodic string // hash: schedule name → last fire, ms
	// Fleet is the set of ids of the processes that serve the queue; each
	// reports itself at Fleet+":"+id, a string that expires unless renewed
	// (see Store.Report).
	Fleet string // set
	// Paused is "1" while the queue is paused (Store.Pause): claims take
	// nothing. Absent while it runs.
	Paused string // string
	// DueHigh and DueLow are the due zsets of the high and low priority
	// levels; Due is the normal level's (lua/options.lua).
	DueHigh, DueLow string // zset: id → run-at, ms
	// Opts holds the options of a job that has any: its priority level
	// when not normal, its unique key and window, how long its id is
	// retained (lua/options.lua's opts).
	Opts string // hash: id → options entry
	// Unique says who holds a unique key ("k:"+key) or a retained id
	// ("i:"+id): "<live>;<until ms>;<id>"; UniqueExp lists the fields with a
	// window by its end, for the leader's cleanup (Store.ExpireUnique).
	Unique    string // hash
	UniqueExp string // zset: field → end of its window, ms
	// Settings holds queue settings the daemons serving the queue write
	// and the scripts read: id_retention (ms).
	Settings string // hash
	// History counts, per minute of the Redis clock, the jobs acked,
	// retried and dead and the lag of the jobs started: field
	// "<minute>:<kind>" (minute = ms / 60000; kind s, r, d, l0 to l11)
	// → count, written by claim, ack, retry and recover (lua/record.lua's
	// history_add). HistoryIndex lists the minutes it holds, for the
	// leader's trim (Store.TrimHistory).
	History      string // hash
	HistoryIndex string // zset: minute → minute
	// Completed and Results hold the finished jobs a queue retains
	// (lua/complete.lua): a completed job keeps its record and state entry
	// in Jobs and State, its finish time (ms, Redis clock) is its score in
	// Completed, and its result, when not empty, is in Results. Both stay
	// empty, and cost nothing, while the queue retains none.
	Completed string // zset: id → finish time, ms
	Results   string // hash: id → result bytes
	// Cancelled holds the jobs cancelled (lua/cancel.lua), before they
	// started or while they ran: each keeps its record, state entry and
	// options entry, its cancel time (ms, Redis clock) is its score, until
	// the leader trims it or an operator requeues or purges it.
	Cancelled string // zset: id → cancel time, ms
	// Job keys (lua/keys.lua): a keyed job waits in KeyIDs (id → run-at,
	// ms) and KeyDue (its key's range, by level and run-at) instead of a
	// due zset; KeyReady holds the keys that may start a job (key → pass),
	// KeyWait those that may later (key → ms), KeyState the slots each
	// key holds and whether it is parked at its cap, KeyCount each key's
	// waiting jobs, KeyConf the per-key overrides (cap, weight). All stay
	// absent, and cost nothing, while the queue has no keyed job.
	KeyIDs, KeyDue, KeyReady, KeyWait, KeyState, KeyCount, KeyConf string
	// Wake is the pub/sub channel on which scripts announce a new earliest
	// due job. It is not a key: it travels in ARGV.
	Wake string
}

// keySet returns the seven keys of job keys, in the order lua/keys.lua's
// kset reads them.
func (k Keys) keySet() []string {
	return []string{k.KeyIDs, k.KeyDue, k.KeyReady, k.KeyWait, k.KeyState, k.KeyCount, k.KeyConf}
}

// QueueKeys returns the keys of queue under prefix. The queue name must have
// been validated: it may not contain braces.
func QueueKeys(prefix, queue string) Keys {
	base := prefix + ":{" + queue + "}:"
	return Keys{
		Jobs:         base + "jobs",
		Due:          base + "due",
		Active:       base + "active",
		Dead:         base + "dead",
		Claims:       base + "claims",
		State:        base + "state",
		Leader:       base + "leader",
		Rate:         base + "rate",
		Periodic:     base + "periodic",
		Fleet:        base + "fleet",
		Paused:       base + "paused",
		DueHigh:      base + "due:high",
		DueLow:       base + "due:low",
		Opts:         base + "opts",
		Unique:       base + "unique",
		UniqueExp:    base + "unique:exp",
		Settings:     base + "settings",
		History:      base + "history",
		HistoryIndex: base + "history:minutes",
		Completed:    base + "completed",
		Results:      base + "results",
		Cancelled:    base + "cancelled",
		KeyIDs:       base + "k:ids",
		KeyDue:       base + "k:due",
		KeyReady:     base + "k:ready",
		KeyWait:      base + "k:wait",
		KeyState:     base + "k:state",
		KeyCount:     base + "k:count",
		KeyConf:      base + "k:conf",
		Wake:         base + "wake",
	}
}

// QueuesKey is the set of known queue names under prefix.
func QueuesKey(prefix string) string { return prefix + ":queues" }

// Kept returns the key of the set an operator triages, from: the dead set
// (SetDead, or empty) or the cancelled set (SetCancelled).
func (k Keys) Kept(from Set) (string, error) {
	switch from {
	case SetDead, "":
		return k.Dead, nil
	case SetCancelled:
		return k.Cancelled, nil
	}
	return "", fmt.Errorf("jobs of set %q: only the dead and cancelled sets are triaged", from)
}
