package limiter

import (
	"context"
	"fmt"
	"time"
)

// Take takes one unit of the rate limit name: at most n takes in any
// window of length per, by every process together (an exact sliding
// window, the one Courier's queues are rate limited with). It reports
// whether the unit was taken; when not, retryAt is when the window will
// have room again — exact, as units never return early — and nothing was
// taken.
//
// name is 1 to MaxNameLen bytes of A-Z a-z 0-9 . _ - : /; n is 1 to
// MaxLimit; per is 1ms to PerMax, whole milliseconds. Callers of one name
// must pass the same per (a shorter window drops the takes a longer one
// still counts); the rate limit and the concurrency limit of a name are
// apart.
func (l *Limiter) Take(ctx context.Context, name string, n int, per time.Duration) (ok bool, retryAt time.Time, err error) {
	return l.TakeN(ctx, name, n, per, 1)
}

// TakeN is Take for k units at once (1 to n): all of them, or none (a
// call that costs more of a provider's quota than another).
func (l *Limiter) TakeN(ctx context.Context, name string, n int, per time.Duration, k int) (ok bool, retryAt time.Time, err error) {
	if err := validateName(name); err != nil {
		return false, time.Time{}, fmt.Errorf("limiter: take: %w", err)
	}
	per, err = validateRate(n, per, k)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("limiter: take %s: %w", name, err)
	}
	if l.ctx.Err() != nil {
		return false, time.Time{}, fmt.Errorf("limiter: take %s: %w", name, ErrClosed)
	}
	r, err := l.b.take(ctx, l.rateKey(name), n, per, k)
	if err != nil {
		return false, time.Time{}, fmt.Errorf("limiter: take %s: %w", name, err)
	}
	if r.ok {
		return true, time.Time{}, nil
	}
	return false, r.at, nil
}

// Wait takes one unit of the rate limit name, waiting as long as the
// window is full (see Take). It returns ctx's cause when ctx ends, and at
// once an error wrapping context.DeadlineExceeded when the window would
// have room only after ctx's deadline, having taken nothing.
func (l *Limiter) Wait(ctx context.Context, name string, n int, per time.Duration) error {
	return l.WaitN(ctx, name, n, per, 1)
}

// WaitN is Wait for k units at once (see TakeN).
func (l *Limiter) WaitN(ctx context.Context, name string, n int, per time.Duration, k int) error {
	for {
		ok, at, err := l.TakeN(ctx, name, n, per, k)
		if err != nil || ok {
			return err
		}
		if dl, has := ctx.Deadline(); has && dl.Before(at) {
			return fmt.Errorf("limiter: wait for %s: room for %d in the window at %s, after the context's deadline: %w",
				name, k, at.Format(time.RFC3339Nano), context.DeadlineExceeded)
		}
		t := time.NewTimer(time.Until(at))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("limiter: wait for %s: %w", name, context.Cause(ctx))
		case <-l.ctx.Done():
			t.Stop()
			return fmt.Errorf("limiter: wait for %s: %w", name, ErrClosed)
		}
	}
}
