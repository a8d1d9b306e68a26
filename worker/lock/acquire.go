package lock

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// AcquireOptions says how long Acquire may wait and how the lock is kept.
// The zero value tries once and holds in watchdog mode.
type AcquireOptions struct {
	// Wait bounds the time Acquire waits while another holder has the
	// lock: 0 tries once; a negative value waits until ctx ends.
	// Default: 0.
	Wait time.Duration

	// Lease is how the lock is kept. 0 is watchdog mode: the lease is
	// Options.Lease, renewed every Options.Lease/3 until Release. A
	// positive value is a fixed lease (whole milliseconds, at least 1ms),
	// never renewed: Redis deletes the lock when it runs out, and the
	// hold's context ends Margin(Lease) earlier with ErrLockExpired. While
	// the same holder also holds the lock in watchdog mode, a fixed lease
	// is ignored (its holds share one key TTL). Default: 0.
	Lease time.Duration
}

// Acquire takes the lock name for holder, or re-enters it when holder
// already holds it here (every Acquire needs its own Release). holder
// identifies the owner within this process — a goroutine's job, a queue's
// leader duty — and the lock's hash field is Field(holder).
//
// When another holder has the lock, Acquire waits as o.Wait allows: until
// the unlock message on the lock's channel or the lock's remaining TTL,
// whichever comes first, then tries again; it never polls. It returns an
// error wrapping ErrNotAcquired when the wait elapses, the cause of ctx
// when ctx ends, and ErrClosed when the Client is closed.
//
// If ctx ends while an attempt is in flight, Acquire returns at once; the
// attempt's answer is still awaited, and a lock it took is released again
// rather than left taken until its lease runs out.
func (c *Client) Acquire(ctx context.Context, name, holder string, o AcquireOptions) (*Held, error) {
	fixed, err := o.validate(name, holder)
	if err != nil {
		return nil, err
	}
	if c.ctx.Err() != nil {
		return nil, fmt.Errorf("acquire lock %s: %w", name, ErrClosed)
	}
	ref := lockRef{name: name, field: c.Field(holder)}
	label := c.label(name)
	start := time.Now()
	// A waiter's series exist from its first attempt: when it takes over,
	// its first acquire is an increase that rate() sees.
	c.metrics.Touch(label)

	h, ttl, err := c.try(ctx, ref, fixed, label)
	if err != nil {
		return nil, err
	}
	if h != nil {
		c.metrics.Acquired(label, start)
		return h, nil
	}
	if o.Wait == 0 {
		return nil, notAcquired(name, ttl)
	}

	var waitEnd <-chan time.Time
	if o.Wait > 0 {
		t := time.NewTimer(o.Wait - time.Since(start))
		defer t.Stop()
		waitEnd = t.C
	}
	// Join the lock's waiters before sleeping: once the subscription is
	// live, w is woken to try again, so an unlock between the failed
	// attempt and the subscription is not missed.
	w, ok := c.join(name)
	if !ok {
		return nil, fmt.Errorf("acquire lock %s: %w", name, ErrClosed)
	}
	acquired := false
	defer func() { c.leave(w, acquired) }()
	sleep := time.NewTimer(c.sleepFor(ttl))
	defer sleep.Stop()
	for {
		select {
		case <-w.wake:
		case <-sleep.C:
		case <-waitEnd:
			return nil, notAcquired(name, ttl)
		case <-ctx.Done():
			return nil, fmt.Errorf("acquire lock %s: %w", name, context.Cause(ctx))
		case <-c.ctx.Done():
			return nil, fmt.Errorf("acquire lock %s: %w", name, ErrClosed)
		}
		if h, ttl, err = c.try(ctx, ref, fixed, label); err != nil {
			return nil, err
		}
		if h != nil {
			acquired = true
			c.metrics.Acquired(label, start)
			return h, nil
		}
		sleep.Reset(c.sleepFor(ttl))
	}
}

// validate checks o and the names, and returns the fixed lease in whole
// milliseconds (0 in watchdog mode).
func (o AcquireOptions) validate(name, holder string) (time.Duration, error) {
	if name == "" {
		return 0, errors.New("acquire lock: empty name")
	}
	if holder == "" {
		return 0, fmt.Errorf("acquire lock %s: empty holder", name)
	}
	fixed := o.Lease.Truncate(time.Millisecond)
	if o.Lease < 0 || (o.Lease > 0 && fixed == 0) {
		return 0, fmt.Errorf("acquire lock %s: invalid AcquireOptions.Lease: must be 0 (watchdog) or at least 1ms (got %v)", name, o.Lease)
	}
	return fixed, nil
}

// try runs one acquire attempt. It returns the Held when the lock was
// taken, else the lock's remaining TTL.
func (c *Client) try(ctx context.Context, ref lockRef, fixed time.Duration, label string) (*Held, time.Duration, error) {
	lease := c.leaseFor(ref, fixed)
	sent := time.Now()
	ok, ttl, err := c.attempt(ctx, ref, lease, sent)
	if err != nil {
		return nil, 0, fmt.Errorf("acquire lock %s: %w", ref.name, err)
	}
	if !ok {
		c.metrics.Contended(label)
		return nil, ttl, nil
	}
	h, err := c.hold(ctx, ref, fixed == 0, lease, sent)
	return h, 0, err
}

// acquireAnswer is the acquire script's answer.
type acquireAnswer struct {
	ok  bool
	ttl time.Duration
	err error
}

// attempt runs the acquire script. Once sent, a script runs whether or not
// its caller still waits, so it runs under a context detached from ctx and
// bounded by the lease; when ctx ends first, attempt returns ctx's cause at
// once and leaves undo to await the answer.
func (c *Client) attempt(ctx context.Context, ref lockRef, lease time.Duration, sent time.Time) (bool, time.Duration, error) {
	if ctx.Done() == nil { // ctx cannot end: nothing is ever abandoned
		return c.b.acquire(ctx, ref.name, ref.field, lease)
	}
	if ctx.Err() != nil {
		return false, 0, context.Cause(ctx)
	}
	detached := context.WithoutCancel(ctx)
	answers := make(chan acquireAnswer, 1)
	go func() {
		actx, cancel := context.WithTimeout(detached, lease)
		defer cancel()
		ok, ttl, err := c.b.acquire(actx, ref.name, ref.field, lease)
		answers <- acquireAnswer{ok, ttl, err}
	}()
	select {
	case a := <-answers:
		return a.ok, a.ttl, a.err
	case <-ctx.Done():
		go c.undo(detached, ref, lease, sent, answers)
		return false, 0, context.Cause(ctx)
	}
}

// undo awaits the answer of an acquire its caller abandoned and, if it took
// the lock, releases it: that decrements exactly the increment the answer
// reports, so it is safe whatever else this process holds, and waiters
// need not wait out the lease.
func (c *Client) undo(ctx context.Context, ref lockRef, lease time.Duration, sent time.Time, answers <-chan acquireAnswer) {
	if a := <-answers; !a.ok {
		return
	}
	// The acquire also reset the key's TTL, which a live hold of the same
	// holder (a re-entry) must take into account.
	c.mu.Lock()
	if e := c.holds[ref]; e != nil {
		c.confirm(e, sent, lease)
	}
	c.mu.Unlock()
	rctx, cancel := context.WithTimeout(ctx, lease)
	defer cancel()
	if _, err := c.b.release(rctx, ref.name, Channel(ref.name), ref.field, lease); err != nil {
		c.log.Warn("lock: an abandoned acquire took the lock and releasing it failed; it expires after its lease",
			"lock", ref.name, "field", ref.field, "lease", lease, "err", err)
	}
}

// sleepFor is how long a waiter sleeps, at most, after an attempt found the
// lock held with the given TTL: until it expires. A key without a TTL was
// not written by a lock client; look again every watchdog lease.
func (c *Client) sleepFor(ttl time.Duration) time.Duration {
	switch {
	case ttl < 0:
		return c.lease
	case ttl < time.Millisecond:
		return time.Millisecond
	}
	return ttl
}

func notAcquired(name string, ttl time.Duration) error {
	return fmt.Errorf("acquire lock %s: %w (its lease had %v left)", name, ErrNotAcquired, ttl)
}
