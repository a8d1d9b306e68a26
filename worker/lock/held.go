package lock

import (
	"context"
	"fmt"
	"time"
)

// entry is one field's hold on one lock in this process. All Helds of a
// holder on a lock share it, and with it one renewal, one deadline and one
// fate: Redis keeps one hold count per field, so the holds cannot end
// separately except by Release.
type entry struct {
	ref   lockRef
	label string // metrics label of the lock

	count     int  // live Helds
	watchdog  bool // renewed by the watchdog: some hold was taken without a fixed lease
	releasing bool // the last Held's release is in flight: not renewed any more
	ended     bool

	// The last confirmed write of the lease (acquire, renewal, or a
	// release that left holds): when it was sent, on the monotonic clock,
	// and the lease it set. The hold ends at deadline unless a later one is
	// confirmed.
	sent     time.Time
	lease    time.Duration
	deadline time.Time
	timer    *time.Timer

	ctx    context.Context // cancelled with the cause when the hold ends
	cancel context.CancelCauseFunc
}

// Held is one successful Acquire: one hold on a lock, given up with
// Release. Its Context ends when the hold does.
type Held struct {
	c      *Client
	e      *entry
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   bool // Release was called; guarded by c.mu
}

// Name returns the lock's name (its Redis key).
func (h *Held) Name() string { return h.e.ref.name }

// Field returns the hash field the hold is counted under:
// "<client id>:<holder>".
func (h *Held) Field() string { return h.e.ref.field }

// Context returns a context that is cancelled when this hold ends, with
// context.Cause telling why: ErrReleased after Release, ErrLockLost when
// Redis showed the lock gone, ErrLockExpired when its lease ran out without
// a confirmed renewal (always at the end of a fixed lease), ErrClosed after
// Client.Close. Run the work the lock protects under it. It carries the
// values of the context given to the Acquire that took the hold (the first,
// for re-entered holds), not its cancellation: watch your own context too.
func (h *Held) Context() context.Context { return h.ctx }

// Release gives up this hold: it decrements the holder's count in Redis
// and, when that was the last hold, deletes the lock and publishes the
// unlock message that wakes waiters. The Held's context ends with
// ErrReleased either way.
//
// Release returns ErrNotHeld, touching nothing in Redis, when the hold had
// already ended (lost, expired, closed, or released before), and ErrNotHeld
// when Redis no longer had the holder's field. When the call fails
// (ctx ended, network), the hold still ends: if it was the holder's last,
// the lock is no longer renewed and Redis expires it after its lease.
func (h *Held) Release(ctx context.Context) error {
	c, e := h.c, h.e
	c.mu.Lock()
	if h.done {
		c.mu.Unlock()
		return fmt.Errorf("release lock %s: %w: already released", e.ref.name, ErrNotHeld)
	}
	h.done = true
	if e.ended {
		cause := context.Cause(e.ctx)
		c.mu.Unlock()
		h.cancel(ErrReleased)
		return fmt.Errorf("release lock %s: %w: %w", e.ref.name, ErrNotHeld, cause)
	}
	e.count--
	last := e.count == 0
	if last {
		e.releasing = true
	}
	lease := e.lease
	if e.watchdog {
		lease = c.lease
	}
	c.mu.Unlock()
	h.cancel(ErrReleased)

	sent := time.Now()
	res, err := c.b.release(ctx, e.ref.name, Channel(e.ref.name), e.ref.field, lease)

	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err != nil:
		if last {
			c.end(e, ErrReleased)
		}
		return fmt.Errorf("release lock %s: %w", e.ref.name, err)
	case res == releaseNotHeld:
		c.end(e, ErrLockLost)
		return fmt.Errorf("release lock %s: %w", e.ref.name, ErrNotHeld)
	case res == releaseDeleted && !last:
		// Redis counted fewer holds than this process (an earlier release
		// whose reply was lost): the other Helds no longer hold the lock.
		c.end(e, ErrLockLost)
	case res == releaseDecremented && last:
		// Redis counted more holds than this process (an acquire whose
		// reply was lost): nothing here renews it, so it expires.
		c.log.Warn("lock: released the last local hold but Redis still counts holds; it expires after its lease",
			"lock", e.ref.name, "field", e.ref.field, "lease", lease)
		c.end(e, ErrReleased)
	case last:
		c.end(e, ErrReleased)
	default:
		c.confirm(e, sent, lease)
	}
	return nil
}

// hold records a confirmed acquire of ref sent at sent with lease and
// returns the new Held. The caller must not hold c.mu.
func (c *Client) hold(ctx context.Context, ref lockRef, watchdog bool, lease time.Duration, sent time.Time) (*Held, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("acquire lock %s: %w (the lock was taken and expires after %v)", ref.name, ErrClosed, lease)
	}
	e := c.holds[ref]
	if e == nil || e.ended || e.releasing {
		e = &entry{ref: ref, label: c.label(ref.name)}
		e.ctx, e.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
		c.holds[ref] = e
	}
	e.count++
	e.watchdog = e.watchdog || watchdog
	c.confirm(e, sent, lease)
	h := &Held{c: c, e: e}
	h.ctx, h.cancel = context.WithCancelCause(e.ctx)
	return h, nil
}

// leaseFor returns the lease an acquire of ref should set. A holder's holds
// share one key TTL, so while the holder's hold is renewed by the watchdog
// a fixed lease would only cut it short: the watchdog lease is sent instead.
func (c *Client) leaseFor(ref lockRef, fixed time.Duration) time.Duration {
	if fixed == 0 {
		return c.lease
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.holds[ref]; e != nil && e.watchdog && !e.ended && !e.releasing {
		return c.lease
	}
	return fixed
}

// confirm moves e's deadline after a confirmed write sent at sent that set
// lease. Writes are confirmed out of order at times; the latest sent wins,
// since it set the key's TTL last (or it was not applied after an earlier
// one, and then its deadline is the shorter, safer one). c.mu must be held.
func (c *Client) confirm(e *entry, sent time.Time, lease time.Duration) {
	if e.ended || sent.Before(e.sent) {
		return
	}
	e.sent, e.lease = sent, lease
	e.deadline = sent.Add(lease - Margin(lease))
	d := time.Until(e.deadline)
	if e.timer == nil {
		e.timer = time.AfterFunc(d, func() { c.expire(e) })
		return
	}
	e.timer.Reset(d)
}

// expire ends e when its deadline has passed without a later confirmation.
func (c *Client) expire(e *entry) {
	c.mu.Lock()
	if e.ended {
		c.mu.Unlock()
		return
	}
	if d := time.Until(e.deadline); d > 0 { // confirmed again while the timer fired
		e.timer.Reset(d)
		c.mu.Unlock()
		return
	}
	c.end(e, ErrLockExpired)
	since := time.Since(e.sent)
	c.mu.Unlock()
	c.log.Warn("lock: no renewal confirmed within the lease minus the margin; the hold ends",
		"lock", e.ref.name, "field", e.ref.field, "since_last_confirmed_send", since)
}

// end ends e's hold with cause; its Helds' contexts follow. c.mu must be
// held.
func (c *Client) end(e *entry, cause error) {
	if e.ended {
		return
	}
	e.ended = true
	if e.timer != nil {
		e.timer.Stop()
	}
	e.cancel(cause)
	if c.holds[e.ref] == e {
		delete(c.holds, e.ref)
	}
}
