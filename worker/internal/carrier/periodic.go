package carrier

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Schedule gives the fire times of a periodic job.
type Schedule interface {
	// Next returns the first fire time strictly after t.
	Next(t time.Time) time.Time
}

// Periodic is a job enqueued on a schedule by the queue's leader.
type Periodic struct {
	// Name identifies the schedule within the queue; fires get the job id
	// periodic:<Name>:<fire time in Unix ms>.
	Name        string
	Schedule    Schedule
	Payload     []byte
	MaxAttempts int
	Timeout     time.Duration
	// Headers are every fire's job's headers (its kind travels there).
	Headers map[string]string
	// SkipMissed drops the fires missed while no process led the queue;
	// by default a new leader enqueues them (at most maxCatchUp).
	SkipMissed bool
}

// maxCatchUp bounds the fires a new leader enqueues for the time no one led;
// older missed fires are skipped with a warning.
const maxCatchUp = 1000

// periodicLoop enqueues each fire of p once. It starts after the last fire
// recorded in Redis, so a new leader neither repeats a fire nor, unless
// SkipMissed, loses one.
func (c *Carrier) periodicLoop(ctx context.Context, queue, field string, p Periodic, log *slog.Logger) error {
	log = log.With("schedule", p.Name)
	var last time.Time
	var found bool
	for {
		var err error
		if last, found, err = c.st.LastFire(ctx, queue, p.Name); err == nil {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err() // stopped, not failed: the leadership ended
		}
		log.Warn("periodic: read the last fire time; retrying", "err", err)
		if !sleep(ctx, retryWait) {
			return nil
		}
	}
	next := firstFire(p, last, found, time.Now(), log)
	for {
		if !sleep(ctx, time.Until(next)) {
			return nil
		}
		res, err := c.st.Fire(ctx, queue, field, store.Fire{
			Schedule:    p.Name,
			At:          next,
			Payload:     p.Payload,
			MaxAttempts: p.MaxAttempts,
			Timeout:     p.Timeout,
			Headers:     p.Headers,
		})
		switch {
		case errors.Is(err, ErrNotLeader):
			return err
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err() // stopped, not failed: the leadership ended
			}
			log.Warn("periodic: fire; retrying", "at", next, "err", err)
			if !sleep(ctx, retryWait) {
				return nil
			}
			continue
		case res.Early:
			// This clock runs ahead of Redis's: wait for Redis to reach it.
			if !sleep(ctx, next.Sub(res.Now)+time.Millisecond) {
				return nil
			}
			continue
		case res.Fired:
			log.Debug("periodic job enqueued", "at", next)
			if c.cfg.OnFire != nil {
				c.cfg.OnFire(queue)
			}
		}
		next = p.Schedule.Next(next)
	}
}

// firstFire is where a new leader starts: right after the last recorded
// fire, or after now when there is none (a new schedule) or the schedule
// skips missed fires; at most maxCatchUp fires in the past.
func firstFire(p Periodic, last time.Time, found bool, now time.Time, log *slog.Logger) time.Time {
	if !found || p.SkipMissed {
		from := now
		if found && last.After(now) {
			from = last
		}
		return p.Schedule.Next(from)
	}
	next := p.Schedule.Next(last)
	t := next
	for n := 0; !t.After(now); n++ {
		if n == maxCatchUp {
			log.Warn("periodic: more fires were missed than a leader catches up; skipping the older ones", "limit", maxCatchUp)
			return p.Schedule.Next(now)
		}
		t = p.Schedule.Next(t)
	}
	return next
}

// forgetSchedulesLoop deletes the last-fire entries of schedules no longer in the
// queue's configuration that have not fired for scheduleRetention, when the
// process starts leading and every forgetInterval.
func (c *Carrier) forgetSchedulesLoop(ctx context.Context, q Queue, log *slog.Logger) error {
	keep := make([]string, len(q.Periodic))
	for i, p := range q.Periodic {
		keep[i] = p.Name
	}
	return every(ctx, forgetInterval, func() error {
		gone, err := c.st.ForgetSchedules(ctx, q.Name, keep, time.Now().Add(-scheduleRetention))
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("periodic: forget removed schedules", "err", err)
		case len(gone) > 0:
			log.Info("periodic: forgot schedules removed from the configuration", "schedules", gone)
		}
		return nil
	})
}
