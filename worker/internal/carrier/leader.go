package carrier

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker/lock"
)

// elect takes the lead of q whenever it is free and runs the duties while it
// lasts.
func (c *Carrier) elect(ctx context.Context, q Queue) {
	log := c.cfg.Logger.With("queue", q.Name)
	name := c.st.Keys(q.Name).Leader
	for ctx.Err() == nil {
		held, err := c.locks.Acquire(ctx, name, holder, lock.AcquireOptions{Wait: -1})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Warn("leader election: cannot acquire the leader lock; retrying", "err", err, "retry_in", retryWait)
			if !sleep(ctx, retryWait) {
				return
			}
			continue
		}
		log.Info("leading queue")
		c.setLeading(q.Name, true)
		cause := c.lead(ctx, held, q, log)
		c.setLeading(q.Name, false)
		if ctx.Err() != nil {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			err := held.Release(rctx)
			cancel()
			if err != nil && !errors.Is(err, lock.ErrNotHeld) {
				log.Warn("release leadership", "err", err)
			} else {
				log.Info("released leadership")
			}
			return
		}
		log.Warn("lost leadership", "cause", cause)
		if errors.Is(cause, ErrNotLeader) {
			// The lock is someone else's: make sure this hold ends too.
			rctx, cancel := context.WithTimeout(ctx, releaseTimeout)
			_ = held.Release(rctx)
			cancel()
		}
	}
}

// lead runs the duties until the leadership or ctx ends, and returns why the
// leadership ended.
func (c *Carrier) lead(ctx context.Context, held *lock.Held, q Queue, log *slog.Logger) error {
	term, stop := context.WithCancelCause(held.Context())
	defer stop(nil)
	go func() {
		select {
		case <-ctx.Done():
			stop(context.Cause(ctx))
		case <-term.Done():
		}
	}()
	field := c.field(holder)
	duties := []func(context.Context) error{
		func(ctx context.Context) error { return c.recoverLoop(ctx, q, field, log) },
		func(ctx context.Context) error { return c.trimLoop(ctx, q, field, log) },
		func(ctx context.Context) error { return c.sampleLoop(ctx, q) },
	}
	for _, p := range q.Periodic {
		duties = append(duties, func(ctx context.Context) error { return c.periodicLoop(ctx, q.Name, field, p, log) })
	}
	var wg sync.WaitGroup
	for _, duty := range duties {
		wg.Go(func() {
			if err := duty(term); errors.Is(err, ErrNotLeader) {
				stop(fmt.Errorf("queue %s: %w", q.Name, err))
			}
		})
	}
	wg.Wait()
	return context.Cause(term)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
