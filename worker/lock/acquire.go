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
// When holder's earlier hold on name ended here without Redis confirming
// it gone (see Held.Release), Acquire first gives back what Redis may
// still count of it: the new hold is one hold, never a re-entry of a stale
// one.
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
	w, ok := c.waiters.Join(name, Channel(name))
	if !ok {
		return nil, fmt.Errorf("acquire lock %s: %w", name, ErrClosed)
	}
	acquired := false
	defer func() { c.waiters.Leave(w, acquired) }()
	sleep := time.NewTimer(c.sleepFor(ttl))
	defer sleep.Stop()
	for {
		select {
		case <-w.C():
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

// try runs one acquire attempt in ref's gate. It returns the Held when
// the lock was taken, else the lock's remaining TTL. If ctx ends while the
// attempt is in flight, try returns at once; the attempt's answer is still
// awaited, and a lock it took is released again.
func (c *Client) try(ctx context.Context, ref lockRef, fixed time.Duration, label string) (*Held, time.Duration, error) {
	if err := c.enter(ctx, ref); err != nil {
		return nil, 0, fmt.Errorf("acquire lock %s: %w", ref.name, err)
	}
	a, err := gated(ctx, c, ref, func(ctx context.Context) (tried, error) {
		return c.tryGated(ctx, ref, fixed, label)
	}, c.undo)
	if err != nil {
		return nil, 0, fmt.Errorf("acquire lock %s: %w", ref.name, err)
	}
	return a.h, a.ttl, nil
}

// tried is the outcome of an acquire attempt: the Held when it took the
// lock, else the lock's remaining TTL.
type tried struct {
	h   *Held
	ttl time.Duration
}

// tryGated gives back the stale holds of ref, if any, so that the attempt
// takes one hold rather than re-entering them, then runs the acquire
// script and records a hold it took. It runs in ref's gate.
func (c *Client) tryGated(ctx context.Context, ref lockRef, fixed time.Duration, label string) (tried, error) {
	if c.ctx.Err() != nil {
		return tried{}, ErrClosed
	}
	if err := c.giveBackStale(ctx, ref); err != nil {
		return tried{}, err
	}
	lease := c.leaseFor(ref, fixed)
	sent := time.Now()
	ok, ttl, err := c.sendAcquire(ctx, ref, lease)
	if err != nil {
		// The script may have run: Redis may count a hold no Held stands for.
		c.mu.Lock()
		c.markStale(ref, lease, sent)
		c.mu.Unlock()
		return tried{}, err
	}
	if !ok {
		c.metrics.Contended(label)
		return tried{ttl: ttl}, nil
	}
	h, err := c.hold(ctx, ref, fixed == 0, lease, sent)
	return tried{h: h}, err
}

// undo releases a hold taken by an attempt whose caller is gone, so that
// waiters need not wait out the lease. That decrements exactly the
// increment the attempt made, whatever else this process holds. It runs
// in the attempt's gate.
func (c *Client) undo(ctx context.Context, a tried) {
	if a.h == nil || a.h.finish() != nil {
		return
	}
	if err := c.release(ctx, a.h.e); err != nil {
		c.log.Warn("lock: an abandoned acquire took the lock and releasing it failed; it expires after its lease",
			"lock", a.h.e.ref.name, "field", a.h.e.ref.field, "err", err)
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
