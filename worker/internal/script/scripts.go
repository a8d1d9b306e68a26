package script

// The catalog: every script of package lua, declared once.
//
// Repeat: a script that writes is Once unless a second run provably
// changes nothing more.
//
// OOM: as "Out of memory" in doc.go says. The read-only scripts go as
// EVALSHA, not EVALSHA_RO, because the embedded store of courier dev
// refuses TIME in a read-only script.
var (
	// Enqueue adds jobs to a queue, reporting ids that already exist. Not
	// resent: a second run would report the first run's jobs as duplicates.
	Enqueue = declare("enqueue", Once, DenyOOM)
	// Claim moves due jobs to active with a lease and a fresh claim token.
	Claim = declare("claim", Once, AllowOOM)
	// Ack deletes finished jobs.
	Ack = declare("ack", Once, AllowOOM)
	// Complete is Ack for a queue that retains finished jobs: it keeps
	// them, with their results, in the completed set. AllowOOM like Ack
	// (its header says why): it moves finished jobs, and adds at most their
	// results, which the leader's trim bounds.
	Complete = declare("complete", Once, AllowOOM)
	// Retry ends a failed attempt: back to due after a delay, or to dead.
	Retry = declare("retry", Once, AllowOOM)
	// Snooze returns active jobs to due without spending an attempt.
	Snooze = declare("snooze", Once, AllowOOM)
	// Extend renews the leases of running jobs.
	Extend = declare("extend", Once, AllowOOM)
	// Cancel moves a job that has not started, or a running one (its
	// worker told), to the cancelled set. AllowOOM: it moves a job from
	// one set to another and adds nothing but the set's entry, which the
	// leader's trim bounds; an operator must be able to stop a job when
	// Redis is full.
	Cancel = declare("cancel", Once, AllowOOM)
	// Requeue moves dead or cancelled jobs back to due.
	Requeue = declare("requeue", Once, AllowOOM)
	// Recover returns jobs whose lease expired to due, or to dead (leader
	// only, fenced).
	Recover = declare("recover", Once, AllowOOM)
	// Trim deletes dead, completed or cancelled jobs beyond the age and count limits
	// (leader only, fenced).
	Trim = declare("trim", Once, AllowOOM)
	// UniqExpire forgets unique keys and retained ids past their window
	// (leader only, fenced); it only deletes.
	UniqExpire = declare("uniq_expire", Once, AllowOOM)
	// HistoryTrim deletes the minutes of a queue's history older than the
	// retention (leader only, fenced); it only deletes. Once: a second run
	// may delete the next batch of old minutes.
	HistoryTrim = declare("history_trim", Once, AllowOOM)
	// Fire enqueues one fire of a periodic job, once (leader only, fenced).
	// It adds a job, so it is refused out of memory like Enqueue.
	Fire = declare("fire", Once, DenyOOM)
	// Import adds jobs brought from another queue system, with their
	// attempts, last error and death, and records each in the queue's
	// import ledger in the same call. Resent: a second run finds the
	// ledger entries and writes nothing. It adds jobs, so it is refused
	// out of memory like Enqueue.
	Import = declare("import", Resend, DenyOOM)
	// Purge deletes dead jobs.
	Purge = declare("purge", Once, AllowOOM)
	// Get reads one job and the set it is in (read only).
	Get = declare("get", Resend, DenyOOM)
	// Forget deletes the leftovers of an unused queue: it only deletes, and a
	// second run finds nothing more to delete.
	Forget = declare("forget", Resend, AllowOOM)
	// QueueSet changes a queue's record in partition 0 (its
	// layout, id retention and pause): tiny writes, so an operator can
	// pause a queue while Redis is full. A second run changes nothing
	// more: a setting already so is no change, and a layout's
	// compare-and-set finds the revision it wrote and refuses.
	QueueSet = declare("queue_set", Resend, AllowOOM)
	// QueueCopy gives a partition the queue's record unless it holds that
	// revision or a newer one: a second run finds it and writes nothing.
	QueueCopy = declare("queue_copy", Resend, AllowOOM)
	// KeyConf sets a job key's own cap and weight in one partition: tiny
	// writes an operator must be able to make when Redis is full (lowering
	// a tenant's cap is how one stops it from flooding a downstream); a
	// second run sets the same values again.
	KeyConf = declare("key_conf", Resend, AllowOOM)
	// Stats counts a queue's jobs by state and reads its pause flag (read
	// only).
	Stats = declare("stats", Resend, DenyOOM)
	// DeadList reads a page of the dead set after a cursor (read only).
	DeadList = declare("deadlist", Resend, DenyOOM)
	// List reads a page of a queue's ready, scheduled or active jobs after
	// a cursor (read only).
	List = declare("list", Resend, DenyOOM)

	// LockAcquire takes or re-enters a reentrant lock, or returns its TTL.
	LockAcquire = declare("lock_acquire", Once, AllowOOM)
	// LockRelease gives up one hold of a lock; the last hold deletes it and
	// publishes the unlock message.
	LockRelease = declare("lock_release", Once, AllowOOM)
	// LockRenew resets the lease of a held lock: a second run only sets the
	// same TTL again.
	LockRenew = declare("lock_renew", Resend, AllowOOM)

	// LimiterAcquire takes one of a named limit's slots for a holder
	// (worker/limiter), or says when one frees. Resent: a second run finds
	// the holder's slot, moves its deadline and counts it once. DenyOOM: a
	// taken slot is new data; refused out of memory, the caller learns it
	// and holds nothing.
	LimiterAcquire = declare("limiter_acquire", Resend, DenyOOM)
	// LimiterExtend renews a held slot's lease: a second run only sets the
	// deadline again. AllowOOM, like lock_renew: it only renews, and
	// refusing it would take slots from holders that are working.
	LimiterExtend = declare("limiter_extend", Resend, AllowOOM)
	// LimiterRelease frees a held slot and tells the waiters: a second run
	// finds it free and does nothing. AllowOOM: it only deletes.
	LimiterRelease = declare("limiter_release", Resend, AllowOOM)
	// LimiterTake takes units of a named rate limit (rate.lua's window).
	// Once: a second run would take again. DenyOOM: a take adds an entry
	// to the window.
	LimiterTake = declare("limiter_take", Once, DenyOOM)
)

// All returns every declared script.
func All() []*Script {
	return []*Script{
		Enqueue, Claim, Ack, Complete, Retry, Snooze, Extend, Cancel, Requeue,
		Recover, Trim, UniqExpire, HistoryTrim, Fire, Import, Purge, Forget, QueueSet, QueueCopy, KeyConf, Get, Stats, DeadList, List,
		LockAcquire, LockRelease, LockRenew,
		LimiterAcquire, LimiterExtend, LimiterRelease, LimiterTake,
	}
}

// Names returns the names of every declared script.
func Names() []string {
	all := All()
	names := make([]string, len(all))
	for i, s := range all {
		names[i] = s.name
	}
	return names
}
