package carrier

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// completedLoop keeps the completed set of a queue that retains finished
// jobs (Queue.CompletedMaxJobs > 0) within its count and age, every
// CompletedTrimInterval, in calls of at most batchLimit jobs
// (store.TrimCompleted).
//
// It runs much more often than the dead set's trim: a busy queue completes
// thousands of jobs a second, and a trim once a minute would let the set
// grow far beyond its count. Each tick costs one call while the set is
// within its bounds; a call that deletes a full batch (the set is still
// beyond them) is followed at once by the next, so the trim keeps pace
// with any rate of completions: deleting a job costs Redis less than
// completing it.
//
// A queue that retains nothing costs nothing: its loop makes its calls at
// the start of a term and, once a call deletes less than a full batch,
// returns. Those calls delete the completed jobs left from when the queue
// retained some (a configuration changed, and a restart began the term),
// which no trim would reach otherwise.
func (c *Carrier) completedLoop(ctx context.Context, q Queue, field string, log *slog.Logger) error {
	retain := q.CompletedMaxJobs > 0
	t := time.NewTicker(c.cfg.CompletedTrimInterval)
	defer t.Stop()
	for {
		r, err := c.st.TrimCompleted(ctx, q.Name, field, q.CompletedMaxJobs, q.CompletedMaxAge, batchLimit)
		deleted := r.ByAge + r.ByCount
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("trim the completed set", "err", err)
		case deleted > 0:
			log.Debug("trimmed the completed set", "deleted", deleted)
		}
		switch {
		case errors.Is(err, ErrNotLeader):
			return err
		case err == nil && deleted >= batchLimit: // still behind: on at once
			if ctx.Err() != nil {
				return nil
			}
			continue
		case err == nil && !retain:
			return nil // nothing retained is left
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
