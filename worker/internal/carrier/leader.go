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
		if !c.waitShare(ctx, q) {
			return
		}
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
		c.setLeading(q, true)
		cause := c.lead(ctx, held, q, log)
		c.setLeading(q, false)
		if ctx.Err() != nil {
			if err := giveUp(context.WithoutCancel(ctx), held); err != nil {
				log.Warn("release leadership", "err", err)
			} else {
				log.Info("released leadership")
			}
			return
		}
		if errors.Is(cause, errHandOver) {
			log.Info("handed the leadership of a partition over, to spread the partitions' leaders over the fleet")
		} else {
			log.Warn("lost leadership", "cause", cause)
		}
		// Release even a hold that ended: one that ended here (its lease
		// ran out without a confirmed renewal) may still be counted in
		// Redis. Releasing gives that count back, so a follower is woken
		// now rather than when the lease runs out, and this process's next
		// term takes one hold instead of re-entering the stale one.
		if err := giveUp(ctx, held); err != nil {
			log.Warn("release the lost leadership", "err", err)
		}
	}
}

// giveUp releases held, within releaseTimeout. A hold that had ended
// (lock.ErrNotHeld) is not an error: Release gave back what Redis may
// still count of it, or the next Acquire will.
func giveUp(ctx context.Context, held *lock.Held) error {
	ctx, cancel := context.WithTimeout(ctx, releaseTimeout)
	defer cancel()
	if err := held.Release(ctx); err != nil && !errors.Is(err, lock.ErrNotHeld) {
		return err
	}
	return nil
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
		func(ctx context.Context) error { return c.completedLoop(ctx, q, field, log) },
		func(ctx context.Context) error { return c.sampleLoop(ctx, q) },
		func(ctx context.Context) error { return c.forgetSchedulesLoop(ctx, q, log) },
	}
	if q.Group != "" {
		duties = append(duties, func(ctx context.Context) error { return c.spreadLoop(ctx, q) })
	}
	if q.Name == c.first {
		duties = append(duties, func(ctx context.Context) error { return c.forgetQueuesLoop(ctx, log) })
	}
	for _, p := range q.Periodic {
		duties = append(duties, func(ctx context.Context) error { return c.periodicLoop(ctx, q.Name, field, p, log) })
	}
	var wg sync.WaitGroup
	for _, duty := range duties {
		wg.Go(func() {
			switch err := duty(term); {
			case errors.Is(err, ErrNotLeader):
				stop(fmt.Errorf("queue %s: %w", q.Name, err))
			case errors.Is(err, errHandOver):
				stop(err)
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
