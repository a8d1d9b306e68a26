// Package lock is a reentrant distributed lock on Redis with the semantics
// and data layout of Redisson's RLock, so Go processes and Java services
// using Redisson's getLock(name) exclude each other on the same name. It is
// usable from job handlers and is the basis of Courier's leader election.
//
// # Use
//
// One Client per process (it carries the process's client id and runs one
// watchdog); any number of holders in it:
//
//	locks, err := lock.NewClient(rdb, lock.Options{})
//	defer locks.Close()
//	h, err := locks.Acquire(ctx, "invoices:2024-06", "nightly-export", lock.AcquireOptions{Wait: 10 * time.Second})
//	if err != nil { ... } // errors.Is(err, lock.ErrNotAcquired): someone else kept it for 10s
//	defer h.Release(ctx)
//	return export(h.Context()) // cancelled if the lock is lost or expires
//
// # States
//
// The states of one holder's hold on one lock; n is the hold count Redis
// keeps in the holder's field:
//
//	           Acquire: key absent, or the holder's field present
//	free ─────────────────────────────────────────────────────► held (n)
//	 │ ▲                                                         │ ▲  │
//	 │ └──── released: Release at n = 1 (DEL, PUBLISH "0") ─────┤ └──┘ Acquire by the same holder: n+1
//	 │                                                           │      Release at n > 1: n−1
//	 │ Acquire: another field holds it                           ├──► lost:    a renewal or release found the field gone
//	 ▼                                                           ├──► expired: no lease write confirmed for lease − margin;
//	waiting ── unlock message or the TTL ran out: try again      │             Release or the next Acquire gives back
//	 ├──► taken: held (n = 1)                                    │             what Redis still counts
//	 └──► gave up: Wait elapsed (ErrNotAcquired) or ctx ended    └──► closed:  Client.Close (the key is left to expire)
//
// A Held's Context ends when its hold leaves the held state, with cause
// ErrReleased, ErrLockLost, ErrLockExpired or ErrClosed; Release ends that
// Held's context at once. The holds of one holder on one lock share one
// fate: a lost or expired lock ends all of them.
//
// # Holds Redis counts and this process does not
//
// Redis counts a holder's holds, and so does the Client; a lost reply or
// a hold that ended here first can make them differ. A hold that expired
// here is often still counted in Redis (its renewals arrived, their
// replies did not), as is one whose release failed or an acquire whose
// reply was lost. Were such a hold re-entered by the holder's next
// Acquire, its one Release would leave the lock counted and unannounced,
// and waiters would wait out the lease. So the Client keeps one write of
// each holder's holds on a lock in flight at a time, in the order it
// learns their outcome, and gives back what Redis may still count beyond
// its own holds (a release per stale hold; the last one deletes the lock
// and publishes the unlock message):
//
//   - Release of a hold that ended here without Redis confirming it gone
//     gives back what Redis still counts of it;
//   - the holder's next Acquire first gives back what Redis may still
//     count, so it takes one hold, never a second on a stale one;
//   - the last Release of a holder gives back whatever Redis counts beyond
//     it (for example the hold of a closed Client with the same ID), so a
//     released lock is always deleted and announced.
//
// A holder's fields are its own (Options.ID is unique), so nothing given
// back was anyone else's. A Release or Acquire whose ctx ends while its
// call is in flight returns at once; the call's outcome is still awaited,
// and the holder's next write waits for it.
//
// # Leases and the watchdog
//
// AcquireOptions.Lease 0 is watchdog mode: the key's lease is Options.Lease
// (default 30s), and the Client's watchdog renews every lock it holds in
// watchdog mode every Options.Lease/3, all of them in one pipelined round
// trip (on Redis Cluster too). A fixed lease is never renewed.
//
// Every hold has a local deadline on the monotonic clock: the time the last
// confirmed write of its lease (acquire, renewal) was sent, plus the lease,
// minus Margin(lease). The key's TTL was set after that send, so when the
// deadline passes without a newer confirmation the hold ends with
// ErrLockExpired before Redis can let another process in — as long as the
// clocks of this host and Redis run at the same rate. A renewal that finds
// the holder's field gone ends the hold at once with ErrLockLost; one that
// gets no answer is tried again at the next tick, which is sent on time
// whatever the last round is doing. A late answer still counts, from its
// send, as long as it can move the deadline.
//
// # Waiting
//
// A waiting Acquire sleeps until the unlock message on the lock's channel
// or the lock's remaining TTL, whichever is first, then tries again. All
// waiters of a name in a process share one subscription, which exists
// before any attempt they sleep on, so an unlock message is never missed
// while the subscription is up; a message lost otherwise (a reconnect, a
// holder that died) costs at most one TTL. An unlock message wakes the
// oldest waiter of each process; a waiter that gives up passes the turn on.
//
// # Redisson compatibility
//
//   - The lock is the key named exactly name (no prefix), a hash whose field
//     is "<client id>:<holder>" and whose value is the hold count, with a
//     PEXPIRE lease. Redisson writes "<uuid>:<thread id>"; a Go holder must
//     not use a Java thread id with a Redisson client's UUID as its ID.
//   - The scripts in package lua (lock_acquire, lock_release, lock_renew)
//     do what Redisson's tryLockInnerAsync, unlockInnerAsync and
//     renewExpirationAsync do. Newer Redisson versions also write an
//     "unlock latch" key to make a retried unlock idempotent; it is not part
//     of the lock and the two interoperate.
//   - The unlock message is "0" (LockPubSub.UNLOCK_MESSAGE), PUBLISHed to
//     Channel(name): "redisson_lock__channel:{name}", or
//     "redisson_lock__channel:name" when name already contains '{'.
//   - Redisson versions that use sharded pub/sub on a Redis 7 Cluster
//     (SPUBLISH / SSUBSCRIBE) do not hear PUBLISH, nor we their SPUBLISH: the
//     locks still exclude each other, but a waiter on one side learns of the
//     other side's release only from the TTL. Configure such Redisson
//     clients for classic pub/sub when Go and Java wait on the same locks.
//   - Options.Lease defaults to Redisson's lockWatchdogTimeout, 30s, renewed
//     every 10s like Redisson's watchdog.
//
// # Redis Cluster
//
// Every script touches only the lock's key; the channel travels in ARGV, so
// any name works on a cluster. Give related locks and keys a common hash
// tag ("{queue}") to put them in one slot, as Courier's leader locks do.
package lock
