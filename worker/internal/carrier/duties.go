package carrier

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// recoverLoop returns jobs whose lease expired to due (or to dead when they
// have no attempts left), about once a RecoverInterval, in bounded calls.
//
// A lease that ended while Redis could not be reached ended for its holder
// too: a holder that is alive renews it in its next round, once its own
// calls get through. So the loop recovers only after it has been in touch
// with Redis for Config.RenewGrace: from the start of the term (the acquire
// that began it reached Redis), and after a failed call, from the end of
// the first call that gets through again. Until then it reads the queue's
// sizes each tick; a read that took longer than a quarter of the grace
// (Redis or the way to it was away meanwhile) starts the grace again.
// Holders that were cut off with the leader, by a failover, a restart or
// a stall, renew first; the jobs of one that died are recovered RenewGrace
// later.
func (c *Carrier) recoverLoop(ctx context.Context, q Queue, field string, log *slog.Logger) error {
	t := touch{since: time.Now(), grace: c.cfg.RenewGrace}
	return every(ctx, c.cfg.RecoverInterval, func() error {
		if !t.ready(func() error { _, err := c.st.Stats(ctx, q.Name); return err }) {
			return nil
		}
		var total store.Recovered
		err := sweep(ctx, log, duty{what: "recover expired leases", batch: batchLimit, call: func() (int, error) {
			r, err := c.st.Recover(ctx, q.Name, field, batchLimit, q.MaxAttempts)
			total.Due, total.Dead = total.Due+r.Due, total.Dead+r.Dead
			return r.Due + r.Dead, err
		}})
		if total.Due+total.Dead > 0 {
			log.Info("recovered jobs whose lease expired", "due", total.Due, "dead", total.Dead)
		}
		if err != nil {
			t.since = time.Time{}
		}
		return err
	})
}

// touch tracks since when a leader's calls have got through to Redis
// promptly: zero after a failed call.
type touch struct {
	since time.Time
	grace time.Duration
}

// ready reports whether calls have got through for the grace. Until they
// have, it calls probe to see whether Redis answers: a failed probe starts
// the wait anew, and so does one that took longer than a quarter of the
// grace (Redis, or the way to it, was away while it waited).
func (t *touch) ready(probe func() error) bool {
	if !t.since.IsZero() && time.Since(t.since) >= t.grace {
		return true
	}
	sent := time.Now()
	switch err := probe(); {
	case err != nil:
		t.since = time.Time{}
	case t.since.IsZero() || time.Since(sent) > t.grace/4:
		t.since = time.Now()
	}
	return !t.since.IsZero() && time.Since(t.since) >= t.grace
}

// trimLoop keeps the dead set within DeadMaxJobs and DeadMaxAge, the
// cancelled set within the bounds of cancelledBounds, forgets
// the unique keys and retained ids whose window has ended (Redis 7.0 has
// no per-field expiry), and deletes the minutes of the queue's history
// older than HistoryRetention: every TrimInterval, one sweep of bounded
// calls that goes on at once while any of them comes back full, so it
// keeps pace with any rate of dead jobs, windows and minutes (see sweep).
func (c *Carrier) trimLoop(ctx context.Context, q Queue, field string, log *slog.Logger) error {
	return every(ctx, c.cfg.TrimInterval, func() error {
		var dead, cancelled store.Trimmed
		forgotten, minutes := 0, 0
		cancelledJobs, cancelledAge := c.cancelledBounds(q)
		err := sweep(ctx, log,
			duty{what: "trim the dead set", batch: batchLimit, call: func() (int, error) {
				t, err := c.st.TrimDead(ctx, q.Name, field, cmp.Or(q.DeadMaxJobs, c.cfg.DeadMaxJobs), c.cfg.DeadMaxAge, batchLimit)
				dead.ByAge, dead.ByCount = dead.ByAge+t.ByAge, dead.ByCount+t.ByCount
				return t.ByAge + t.ByCount, err
			}},
			duty{what: "trim the cancelled set", batch: batchLimit, call: func() (int, error) {
				t, err := c.st.TrimCancelled(ctx, q.Name, field, cancelledJobs, cancelledAge, batchLimit)
				cancelled.ByAge, cancelled.ByCount = cancelled.ByAge+t.ByAge, cancelled.ByCount+t.ByCount
				return t.ByAge + t.ByCount, err
			}},
			duty{what: "forget expired unique keys", batch: batchLimit, call: func() (int, error) {
				u, err := c.st.ExpireUnique(ctx, q.Name, field, batchLimit)
				forgotten += u.Forgotten
				return u.Looked, err
			}},
			duty{what: "trim the history", batch: store.HistoryTrimBatch, call: func() (int, error) {
				n, err := c.st.TrimHistory(ctx, q.Name, field, c.cfg.HistoryRetention)
				minutes += n
				return n, err
			}},
		)
		if dead.ByAge+dead.ByCount > 0 {
			log.Info("trimmed the dead set", "by_age", dead.ByAge, "by_count", dead.ByCount)
		}
		if cancelled.ByAge+cancelled.ByCount > 0 {
			log.Info("trimmed the cancelled set", "by_age", cancelled.ByAge, "by_count", cancelled.ByCount)
		}
		if forgotten > 0 {
			log.Debug("forgot expired unique keys", "forgotten", forgotten)
		}
		if minutes > 0 {
			log.Debug("trimmed the history", "minutes", minutes)
		}
		return err
	})
}

// cancelledBounds returns how many cancelled jobs the partition q keeps
// and for how long (0 = no age bound): the queue's completed retention
// when it retains completed jobs (CompletedMaxJobs > 0), since a user who
// keeps finished jobs keeps cancelled ones alike; else the dead set's
// bounds, as a cancelled job, like a dead one, waits for an operator's
// requeue or purge.
func (c *Carrier) cancelledBounds(q Queue) (int, time.Duration) {
	if q.CompletedMaxJobs > 0 {
		return q.CompletedMaxJobs, q.CompletedMaxAge
	}
	return cmp.Or(q.DeadMaxJobs, c.cfg.DeadMaxJobs), c.cfg.DeadMaxAge
}

// forgetQueuesLoop removes the queues no longer in use (no job, no process
// serving them) from the set of known queues, with their leftover keys,
// every ForgetQueuesInterval after the first. One leader per process does
// it, the leader of the process's first queue: a fleet does it a few
// times an hour, each call idempotent.
func (c *Carrier) forgetQueuesLoop(ctx context.Context, log *slog.Logger) error {
	keep := make([]string, len(c.queues))
	for i, q := range c.queues {
		keep[i] = q.Name
	}
	if !sleep(ctx, c.cfg.ForgetQueuesInterval) {
		return nil
	}
	return every(ctx, c.cfg.ForgetQueuesInterval, func() error {
		gone, err := c.st.ForgetQueues(ctx, keep)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("forget unused queues", "err", err)
		case len(gone) > 0:
			log.Info("forgot queues no longer in use", "queues", gone)
		}
		return nil
	})
}

// duty is one bounded call of a leader's upkeep: it handles at most batch
// items (jobs, windows, minutes), and one that handled batch may have left
// more.
type duty struct {
	what  string // for the log: "trim the dead set"
	batch int
	call  func() (done int, err error)
}

// sweep calls each duty in turn, and again at once while it comes back
// full, until every duty has caught up (a call handled less than its
// batch), ctx ends, or a call fails: then it returns that error (logged
// unless ctx ended) and calls nothing more this time. Turns keep the
// duties fair: one far behind does not hold the others up.
//
// The calls are bounded, not their number: each call stays about a
// millisecond of Redis, and a sweep goes on for as long as work is left,
// so the upkeep keeps pace with any rate at which work arrives. (A cap of
// calls per sweep was a cap per TrimInterval: 10 calls of 1,000 a minute
// let unique windows pile up beyond about 167 a second; issue 29, item 9.)
func sweep(ctx context.Context, log *slog.Logger, duties ...duty) error {
	behind := slices.Clone(duties)
	for len(behind) > 0 && ctx.Err() == nil {
		next := behind[:0]
		for _, d := range behind {
			n, err := d.call()
			if err != nil {
				if ctx.Err() == nil {
					log.Warn(d.what, "err", err)
				}
				return err
			}
			if n >= d.batch {
				next = append(next, d)
			}
		}
		behind = next
	}
	return nil
}

// sampleLoop reads the queue's sizes and pause flag for the metrics. Only the leader
// samples, so a fleet asks Redis once per queue, not once per process; of
// a queue of several partitions, partition 0's leader, which adds the
// sizes of the others (Queue.Sum).
func (c *Carrier) sampleLoop(ctx context.Context, q Queue) error {
	if c.cfg.OnSample == nil || q.partition() {
		return nil
	}
	keyed := false // the last sample found job keys
	return every(ctx, c.cfg.SampleInterval, func() error {
		// A failed sample is skipped: the next one comes in SampleInterval.
		parts := append([]string{q.Name}, q.Sum...)
		all, err := c.st.StatsOf(ctx, parts)
		if err != nil {
			return nil //nolint:nilerr // skipped: the next sample comes in SampleInterval
		}
		total := store.Total(all)
		c.cfg.OnSample(q.label(), total)
		if c.cfg.OnKeys != nil && (total.Keys > 0 || keyed) {
			if top, err := c.topKeys(ctx, parts); err == nil {
				c.cfg.OnKeys(q.label(), top)
				keyed = total.Keys > 0
			}
		}
		return nil
	})
}

// topKeys returns the TopKeys keys of partitions with the most waiting
// jobs, most first.
func (c *Carrier) topKeys(ctx context.Context, parts []string) ([]store.KeyInfo, error) {
	all, _, err := c.st.TopKeys(ctx, parts, c.cfg.TopKeys)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b store.KeyInfo) int {
		return cmp.Or(cmp.Compare(b.Waiting, a.Waiting), cmp.Compare(a.Key, b.Key))
	})
	return all[:min(len(all), c.cfg.TopKeys)], nil
}

// every calls f now and then every interval until ctx ends or f returns
// ErrNotLeader.
func every(ctx context.Context, interval time.Duration, f func() error) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if err := f(); errors.Is(err, ErrNotLeader) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
