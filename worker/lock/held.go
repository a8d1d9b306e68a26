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
	// written is when the last write of the lease was sent, confirmed or
	// not: with the lease, when Redis expires the key at the latest.
	written time.Time

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
// Release returns ErrNotHeld when the hold had already ended (lost,
// expired, closed, or released before) or Redis no longer had the holder's
// field. A hold that ended here without Redis confirming it gone (its
// lease ran out here first, or its release failed) may still be counted
// in Redis: Release then gives that count back, so waiters are woken now
// rather than when the lease runs out, and still returns ErrNotHeld. The
// last Release of a holder likewise gives back whatever Redis counts
// beyond this process's holds (an acquire whose reply was lost, a Client
// with the same ID closed while holding): a released lock is always
// deleted and announced. When the call fails (ctx ended, network), the
// hold still ends: if it was the holder's last, the lock is no longer
// renewed and Redis expires it after its lease, or the holder's next
// Acquire or Release gives it back.
func (h *Held) Release(ctx context.Context) error {
	c, e := h.c, h.e
	if err := h.finish(); err != nil {
		return fmt.Errorf("release lock %s: %w", e.ref.name, err)
	}
	if err := c.enter(ctx, e.ref); err != nil {
		c.mu.Lock()
		ended, cause := e.ended, context.Cause(e.ctx)
		c.unsent(e)
		c.mu.Unlock()
		if ended {
			return fmt.Errorf("release lock %s: %w: %w", e.ref.name, ErrNotHeld, cause)
		}
		return fmt.Errorf("release lock %s: %w", e.ref.name, err)
	}
	_, err := gated(ctx, c, e.ref, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.release(ctx, e)
	}, nil)
	if err != nil {
		return fmt.Errorf("release lock %s: %w", e.ref.name, err)
	}
	return nil
}

// finish marks h released and ends its context, or reports that it was
// released before.
func (h *Held) finish() error {
	h.c.mu.Lock()
	done := h.done
	h.done = true
	h.c.mu.Unlock()
	if done {
		return fmt.Errorf("%w: already released", ErrNotHeld)
	}
	h.cancel(ErrReleased)
	return nil
}

// unsent drops one hold of e whose release was never sent: Redis still
// counts it. c.mu must be held.
func (c *Client) unsent(e *entry) {
	if e.ended {
		return
	}
	c.markStale(e.ref, c.keyLease(e), e.written)
	if e.count--; e.count == 0 {
		c.end(e, ErrReleased)
	}
}

// release gives up one hold of e in Redis. It runs in e.ref's gate.
func (c *Client) release(ctx context.Context, e *entry) error {
	ref := e.ref
	c.mu.Lock()
	if e.ended {
		cause := context.Cause(e.ctx)
		c.mu.Unlock()
		if err := c.giveBackStale(ctx, ref); err != nil {
			return fmt.Errorf("%w: %w; %w", ErrNotHeld, cause, err)
		}
		return fmt.Errorf("%w: %w", ErrNotHeld, cause)
	}
	e.count--
	last := e.count == 0
	if last {
		e.releasing = true
	}
	lease := c.keyLease(e)
	sent := time.Now()
	e.written = later(e.written, sent)
	c.mu.Unlock()
	res, err := c.sendRelease(ctx, ref, lease)

	c.mu.Lock()
	switch {
	case err != nil:
		// The script may not have run: Redis may still count the hold.
		c.markStale(ref, lease, sent)
		if last {
			c.end(e, ErrReleased)
		}
	case res == releaseNotHeld:
		c.end(e, ErrLockLost)
		delete(c.stale, ref)
		err = ErrNotHeld
	case res == releaseDeleted:
		// The lock is deleted and announced. If holds remained here,
		// Redis counted fewer than this process (the key was rewritten
		// behind its back): the other Helds no longer hold the lock.
		cause := ErrReleased
		if !last {
			cause = ErrLockLost
		}
		c.end(e, cause)
		delete(c.stale, ref)
	case last:
		// Redis still counts holds no Held here stands for: stale ones,
		// given back now so that the lock is deleted and announced.
		c.end(e, ErrReleased)
		c.markStale(ref, lease, sent)
		c.mu.Unlock()
		return c.giveBackStale(ctx, ref)
	default:
		c.confirm(e, sent, lease)
	}
	c.mu.Unlock()
	return err
}

// keyLease is the lease a write of e's key sets: the watchdog's while any
// of its holds is renewed, else the fixed lease it was taken with. c.mu
// must be held.
func (c *Client) keyLease(e *entry) time.Duration {
	if e.watchdog {
		return c.lease
	}
	return e.lease
}

// hold records a confirmed acquire of ref sent at sent with lease and
// returns the new Held. The caller must not hold c.mu.
func (c *Client) hold(ctx context.Context, ref lockRef, watchdog bool, lease time.Duration, sent time.Time) (*Held, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("%w (the lock was taken and expires after %v)", ErrClosed, lease)
	}
	e := c.holds[ref]
	if e == nil || e.ended || e.releasing {
		e = &entry{ref: ref, label: c.label(ref.name)}
		e.ctx, e.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
		c.holds[ref] = e
	}
	e.count++
	e.watchdog = e.watchdog || watchdog
	e.written = later(e.written, sent)
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
	// Redis may still count the holds: a renewal may have reached it.
	c.markStale(e.ref, c.keyLease(e), e.written)
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

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
