package limiter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// Acquire takes one of the max slots of the limit name, fleet-wide, and
// waits while all of them are held, until one frees or ctx ends. The slot
// is held until Release: the Limiter's watchdog renews its lease every
// lease/3. If this process dies, or cannot reach Redis, the slot frees
// lease after its last renewal, and its Context ends a margin earlier
// (lease/10, at least 50ms).
//
// name is 1 to MaxNameLen bytes of A-Z a-z 0-9 . _ - : /; max is 1 to
// MaxLimit; lease is LeaseMin to LeaseMax, whole milliseconds. Every
// process passing the same name shares its slots; callers of one name
// should pass the same max (each call compares the holders to its own).
//
// A waiting Acquire is woken by a Release in any process (one waiter per
// process for each slot freed) or sleeps until the earliest lease among the
// holders ends, whichever comes first; it never polls. It returns ctx's
// cause when ctx ends, ErrClosed after Close, and an error wrapping
// ErrInvalid for a bad argument.
func (l *Limiter) Acquire(ctx context.Context, name string, max int, lease time.Duration) (*Slot, error) {
	lease, err := checkAcquire(name, max, lease)
	if err != nil {
		return nil, err
	}
	s, at, err := l.try(ctx, name, max, lease)
	if err != nil || s != nil {
		return s, err
	}
	// Join the limit's waiters before sleeping: once the subscription is
	// live, w is woken to try again, so a release between the failed
	// attempt and the subscription is not missed.
	w, ok := l.waiters.Join(name, l.channel(name))
	if !ok {
		return nil, fmt.Errorf("limiter: acquire %s: %w", name, ErrClosed)
	}
	acquired := false
	defer func() { l.waiters.Leave(w, acquired) }()
	sleep := time.NewTimer(sleepFor(at))
	defer sleep.Stop()
	for {
		select {
		case <-w.C():
		case <-sleep.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("limiter: acquire %s: %w", name, context.Cause(ctx))
		case <-l.ctx.Done():
			return nil, fmt.Errorf("limiter: acquire %s: %w", name, ErrClosed)
		}
		if s, at, err = l.try(ctx, name, max, lease); err != nil {
			return nil, err
		}
		if s != nil {
			acquired = true
			return s, nil
		}
		sleep.Reset(sleepFor(at))
	}
}

// TryAcquire is Acquire without the wait: it returns the slot when one of
// the max slots of name is free, else nil and when one frees at the
// latest — the earliest lease among the holders ends then, unless its
// holder renews it (a held slot is renewed every lease/3) or releases it
// sooner.
func (l *Limiter) TryAcquire(ctx context.Context, name string, max int, lease time.Duration) (*Slot, time.Time, error) {
	lease, err := checkAcquire(name, max, lease)
	if err != nil {
		return nil, time.Time{}, err
	}
	return l.try(ctx, name, max, lease)
}

// checkAcquire checks Acquire's arguments and returns the lease in whole
// milliseconds.
func checkAcquire(name string, max int, lease time.Duration) (time.Duration, error) {
	if err := validateName(name); err != nil {
		return 0, fmt.Errorf("limiter: acquire: %w", err)
	}
	if err := validateMax("max", max); err != nil {
		return 0, fmt.Errorf("limiter: acquire %s: %w", name, err)
	}
	lease, err := validateLease(lease)
	if err != nil {
		return 0, fmt.Errorf("limiter: acquire %s: %w", name, err)
	}
	return lease, nil
}

// try runs one acquire attempt with a new holder. It returns the Slot
// when it took one, else when a slot frees at the latest.
//
// A script once sent runs whether or not its caller still waits: the
// attempt runs to its end under a context detached from ctx (bounded by
// the lease), and when ctx ends first, or the outcome is unknown (no
// answer), the holder's slot is given back rather than left held until
// its lease passes.
func (l *Limiter) try(ctx context.Context, name string, max int, lease time.Duration) (*Slot, time.Time, error) {
	if l.ctx.Err() != nil {
		return nil, time.Time{}, fmt.Errorf("limiter: acquire %s: %w", name, ErrClosed)
	}
	key, holder := l.slotsKey(name), l.holder()
	sent := time.Now()
	abandon := func(r reply, err error) {
		if r.ok || unknownOutcome(err) {
			l.giveBack(ctx, name, holder, lease)
		}
	}
	r, left, err := detached(ctx, lease, func(ctx context.Context) (reply, error) {
		return l.b.acquire(ctx, key, holder, max, lease)
	}, abandon)
	if err != nil {
		if !left && unknownOutcome(err) {
			l.giveBack(ctx, name, holder, lease)
		}
		return nil, time.Time{}, fmt.Errorf("limiter: acquire %s: %w", name, err)
	}
	if !r.ok {
		return nil, r.at, nil
	}
	s, err := l.newSlot(ctx, name, holder, lease, sent)
	if err != nil {
		l.giveBack(ctx, name, holder, lease)
		return nil, time.Time{}, fmt.Errorf("limiter: acquire %s: %w", name, err)
	}
	return s, time.Time{}, nil
}

// unknownOutcome reports whether a script call that failed with err may
// have run: no reply came (network, timeout). An error reply means Redis
// refused or rejected it before any write.
func unknownOutcome(err error) bool {
	var re *rueidis.RedisError
	return err != nil && !errors.As(err, &re)
}

// giveBack releases holder's slot of name, if Redis holds one, in the
// background: an attempt whose caller left, or whose answer was lost, may
// have taken it. Bounded by the lease, after which it is free anyway.
func (l *Limiter) giveBack(ctx context.Context, name, holder string, lease time.Duration) {
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lease)
		defer cancel()
		if _, err := l.b.release(ctx, l.slotsKey(name), l.channel(name), holder); err != nil {
			l.log.Warn("limiter: an abandoned acquire may hold a slot and giving it back failed; it frees when its lease passes",
				"limit", name, "holder", holder, "lease", lease, "err", err)
		}
	}()
}

// detached runs op to its end under a context detached from ctx and
// bounded by limit. When ctx ends first, detached returns ctx's cause at
// once, with left true, and hands op's outcome, when it comes, to abandon.
func detached[T any](ctx context.Context, limit time.Duration, op func(context.Context) (T, error), abandon func(T, error)) (v T, left bool, err error) {
	run := func() (T, error) {
		octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), limit)
		defer cancel()
		return op(octx)
	}
	if ctx.Done() == nil { // ctx cannot end: nothing is ever abandoned
		v, err = run()
		return v, false, err
	}
	type result struct {
		v   T
		err error
	}
	results := make(chan result, 1)
	var mu sync.Mutex
	gave := false // the caller returned without the result
	go func() {
		v, err := run()
		mu.Lock()
		gone := gave
		if !gone {
			results <- result{v, err}
		}
		mu.Unlock()
		if gone {
			abandon(v, err)
		}
	}()
	select {
	case r := <-results:
		return r.v, false, r.err
	case <-ctx.Done():
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case r := <-results: // it finished meanwhile: nothing is abandoned
		return r.v, false, r.err
	default:
	}
	gave = true
	return v, true, context.Cause(ctx)
}

// sleepFor is how long a waiter sleeps, at most, before trying again when
// a slot frees at the latest at at.
func sleepFor(at time.Time) time.Duration {
	return max(time.Until(at), time.Millisecond)
}
