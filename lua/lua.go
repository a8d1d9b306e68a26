// Package lua holds Courier's Redis scripts, one file per script, embedded
// into the binary. Each file opens with a header stating its KEYS, its ARGV
// with units, what it returns and how much work one call may do.
//
// record.lua is not a script: it is the job record codec and small helpers,
// prepended to every script so that all of them read and write records the
// same way. The exported strings are the complete scripts to load.
//
// The lock scripts (lock_*.lua, used by package worker/lock) read no job
// record and follow Redisson's RLock scripts: they are exported as they are,
// without the codec.
package lua

import _ "embed"

var (
	//go:embed record.lua
	prelude string

	//go:embed enqueue.lua
	enqueue string
	//go:embed claim.lua
	claim string
	//go:embed ack.lua
	ack string
	//go:embed retry.lua
	retry string
	//go:embed snooze.lua
	snooze string
	//go:embed extend.lua
	extend string
	//go:embed cancel.lua
	cancel string
	//go:embed requeue.lua
	requeue string
	//go:embed recover.lua
	recoverSrc string
	//go:embed get.lua
	get string
	//go:embed stats.lua
	stats string
	//go:embed trim.lua
	trim string
	//go:embed fire.lua
	fire string
	//go:embed deadlist.lua
	deadList string
	//go:embed purge.lua
	purge string
)

// The scripts, each with the record codec prepended.
var (
	// Enqueue adds jobs to a queue, reporting ids that already exist.
	Enqueue = prelude + enqueue
	// Claim moves due jobs to active with a lease.
	Claim = prelude + claim
	// Ack deletes finished jobs.
	Ack = prelude + ack
	// Retry ends a failed attempt: back to due after a delay, or to dead.
	Retry = prelude + retry
	// Snooze returns active jobs to due without spending an attempt.
	Snooze = prelude + snooze
	// Extend renews the leases of running jobs.
	Extend = prelude + extend
	// Cancel deletes a job that has not started.
	Cancel = prelude + cancel
	// Requeue moves dead jobs back to due.
	Requeue = prelude + requeue
	// Recover returns jobs whose lease expired to due, or to dead when their
	// attempts are used up (carrier, fenced).
	Recover = prelude + recoverSrc
	// Get reads one job and the set it is in (read only).
	Get = prelude + get
	// Stats counts a queue's jobs by state (read only).
	Stats = prelude + stats
	// Trim deletes dead jobs beyond the age and count limits (carrier,
	// fenced).
	Trim = prelude + trim
	// Fire enqueues one fire of a periodic job, once (carrier, fenced).
	Fire = prelude + fire
	// DeadList reads a page of the dead set after a cursor (read only).
	DeadList = prelude + deadList
	// Purge deletes dead jobs.
	Purge = prelude + purge
)

// The lock scripts, exported as they are (no record codec).
var (
	// LockAcquire takes or re-enters a reentrant lock, or returns its TTL.
	//
	//go:embed lock_acquire.lua
	LockAcquire string
	// LockRelease gives up one hold of a lock; the last hold deletes it and
	// publishes the unlock message.
	//
	//go:embed lock_release.lua
	LockRelease string
	// LockRenew extends the lease of a held lock.
	//
	//go:embed lock_renew.lua
	LockRenew string
)

// All returns every script by name: the file name without ".lua" (claim,
// lock_renew, …). Metrics label script calls with these names.
func All() map[string]string {
	return map[string]string{
		"enqueue": Enqueue, "claim": Claim, "ack": Ack, "retry": Retry,
		"snooze": Snooze, "extend": Extend, "cancel": Cancel, "requeue": Requeue,
		"recover": Recover, "get": Get, "stats": Stats, "trim": Trim,
		"fire": Fire, "deadlist": DeadList, "purge": Purge,
		"lock_acquire": LockAcquire, "lock_release": LockRelease, "lock_renew": LockRenew,
	}
}
