package lock

import (
	"context"
	"time"
)

// backend is everything a Client needs from Redis: the three lock scripts
// and the unlock channel. redisBackend is the real one; the tests drive the
// watchdog and waiter timing with an in-memory fake inside synctest bubbles,
// where real network I/O cannot run.
type backend interface {
	// acquire runs the acquire script. ok reports that field now holds
	// name (taken or re-entered, lease set); otherwise ttl is the lock's
	// remaining time to live, negative when the key has no expiry.
	acquire(ctx context.Context, name, field string, lease time.Duration) (ok bool, ttl time.Duration, err error)

	// release runs the release script, publishing the unlock message on
	// channel when the last hold goes.
	release(ctx context.Context, name, channel, field string, lease time.Duration) (releaseResult, error)

	// renew runs the renew script for every lock in one round trip;
	// results[i] belongs to locks[i].
	renew(ctx context.Context, lease time.Duration, locks []lockRef) []renewResult

	// subscribe listens on channel until ctx ends or the subscription
	// breaks. It calls onSubscribed each time the subscription is
	// (re)established (messages sent while it was not are lost) and
	// onMessage for every message. Both run on the connection's reader and
	// must not block.
	subscribe(ctx context.Context, channel string, onSubscribed, onMessage func()) error
}

// lockRef names one field's hold on one lock.
type lockRef struct {
	name  string
	field string
}

// releaseResult is what the release script did.
type releaseResult int

const (
	releaseNotHeld     releaseResult = iota // the field did not hold the lock: nothing changed
	releaseDecremented                      // holds remain; lease reset
	releaseDeleted                          // last hold: key deleted, unlock message published
)

// renewResult is one lock's renewal outcome.
type renewResult struct {
	held bool  // the field still held the lock and its lease was reset
	err  error // no answer: the outcome is unknown
}
