package limiter

import (
	"context"
	"time"
)

// backend is everything a Limiter needs from Redis: the four limiter
// scripts and the free channel. redisBackend is the real one; the tests
// drive the watchdog and the waits with an in-memory fake inside synctest
// bubbles, where real network I/O cannot run, and hold the fake to the
// scripts' answers (TestBackendContract).
type backend interface {
	// acquire runs limiter_acquire: holder takes one of max slots of the
	// limit whose zset is key, with lease.
	acquire(ctx context.Context, key, holder string, max int, lease time.Duration) (reply, error)

	// extend runs limiter_extend: ok reports that holder still held its
	// slot, whose lease is now lease from the Redis clock.
	extend(ctx context.Context, key, holder string, lease time.Duration) (ok bool, err error)

	// release runs limiter_release: ok reports that holder held a slot,
	// now free, and that the waiters were told on channel.
	release(ctx context.Context, key, channel, holder string) (ok bool, err error)

	// take runs limiter_take: k units of n per window per from the window
	// whose zset is key.
	take(ctx context.Context, key string, n int, per time.Duration, k int) (reply, error)

	// subscribe listens on channel until ctx ends or the subscription
	// breaks. It calls onSubscribed each time the subscription is
	// (re)established (messages sent while it was not are lost) and
	// onMessage for every message. Both run on the connection's reader and
	// must not block.
	subscribe(ctx context.Context, channel string, onSubscribed, onMessage func()) error
}

// reply is an acquire's or a take's answer: whether it took, and when (on
// this host's clock) its slot's lease ends or the next chance comes; n is
// the live holders of the limit, or the units left in the window.
type reply struct {
	ok bool
	at time.Time
	n  int
}

// localTime maps a time of the Redis clock (at, ms) onto this host's
// clock, given the Redis clock's now (ms) read in the same call: the
// offset between the clocks does not matter, and the reply's travel time
// only makes the mapped time a little late.
func localTime(nowMs, atMs int64) time.Time {
	return time.Now().Add(time.Duration(atMs-nowMs) * time.Millisecond)
}
