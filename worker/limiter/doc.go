// Package limiter gives application code — job handlers, HTTP handlers,
// any process that calls an external API — limits that hold across a
// whole fleet of processes, on the Redis Courier runs on:
//
//   - a concurrency limit: at most max holders of a named limit at once
//     (Acquire, TryAcquire; a Slot each, given back with Release);
//   - a rate limit: at most n takes of a named limit in any window of a
//     given length (Take, Wait), on the same sliding-window script that
//     limits a queue's claims.
//
// It is worker/lock's neighbour and works like it: built on a
// rueidis.Client, no polling, a watchdog, contexts that end when what they
// stand for is lost, on a single Redis and on a Redis Cluster.
//
// # Use
//
// One Limiter per process, shared by everything that calls the API:
//
//	lim, err := limiter.New(rdb, limiter.Options{})
//	defer lim.Close()
//
//	// at most 10 calls to the provider in flight, fleet-wide
//	slot, err := lim.Acquire(ctx, "geocoder", 10, 30*time.Second)
//	if err != nil { ... }
//	defer slot.Release(context.WithoutCancel(ctx))
//	res, err := geocode(slot.Context(), addr) // cancelled if the slot is lost
//
//	// at most 100 calls per second, fleet-wide
//	if err := lim.Wait(ctx, "geocoder", 100, time.Second); err != nil { ... }
//
// # Slots
//
// The states of one Slot:
//
//	                 Acquire / TryAcquire: fewer than max live holders
//	(none) ───────────────────────────────────────────────────────► held
//	  │                                                              │ ▲
//	  │ all max held: TryAcquire returns when one frees;             │ └── watchdog: renewed every lease/3
//	  ▼ Acquire waits                                                ├──► released: Release (ZREM, a message to the waiters)
//	waiting ── a release message, or the earliest lease ends:        ├──► lost:     a renewal or Extend found the holder gone
//	 │         try again; a free slot: held                          ├──► expired:  no renewal confirmed for lease − margin
//	 └──► gave up: ctx ended, or Close                               └──► closed:   Limiter.Close (freed when the lease passes)
//
// A Slot's Context ends when it leaves the held state, with cause
// ErrReleased, ErrSlotLost, ErrSlotExpired (which wraps ErrSlotLost) or
// ErrClosed. Each slot has a local deadline on the monotonic clock: the
// time its last confirmed lease write (acquire, renewal, Extend) was sent,
// plus the lease, minus a margin (lease/10, at least 50ms, at most
// lease/2). Redis frees the slot at the lease counted from when that write
// ran, so the Slot ends here before Redis lets another caller in, as long
// as this host's clock and Redis's run at the same rate.
//
// A crashed process never leaks a slot: nothing renews it, and it is free
// when its lease passes. An Acquire whose caller leaves while its call is
// in flight, or whose answer is lost, gives back the slot the call may
// have taken.
//
// # Waiting
//
// A waiting Acquire sleeps until a release message on the limit's channel
// or the earliest lease among the holders ends, whichever is first, then
// tries again. All waiters of a limit in a process share one subscription,
// which exists before any attempt they sleep on, so a release is never
// missed while the subscription is up; one sent while it is down costs at
// most the time to the next lease end (the resubscription wakes everyone).
// A release wakes the oldest waiter of each process; a waiter that gives up
// passes the turn on.
//
// A waiting Wait sleeps until the window has room, which Take computes
// exactly: a take never comes back early, so no message is needed.
//
// # Data in Redis
//
// For a limit name under the prefix p (Options.Prefix), all in one hash
// slot:
//
//   - p:{limiter:name}:slots, a sorted set: holder ("<Options.ID>:<n>") →
//     lease deadline, ms on the Redis clock. A holder holds a slot while
//     the clock is below its deadline; acquires drop those past it. The
//     key expires with the latest deadline.
//   - p:{limiter:name}:rate, a sorted set: the rate window, one entry per
//     take ("<cumulative>:<units>" → time of the take, µs on the Redis
//     clock), expiring a window after the last take.
//   - p:{limiter:name}:free, a channel (not a key): each release sends one
//     message, SPUBLISH (PUBLISH on a server without sharded pub/sub).
//
// A limit that is not used leaves nothing behind. The scripts
// (lua/limiter_acquire.lua, limiter_extend.lua, limiter_release.lua,
// limiter_take.lua) use the Redis clock only, so the hosts' clocks may
// disagree. The minimal Redis user of Courier's documentation
// (docs/security.md) runs them under the default prefix.
package limiter
