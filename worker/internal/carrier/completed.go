package carrier

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// completedLoop keeps the completed set of a queue that retains finished
// jobs (Queue.CompletedMaxJobs > 0) within its count and age, every
// CompletedTrimInterval, in bounded calls (store.TrimCompleted).
//
// It runs much more often than the dead set's trim: a busy queue completes
// thousands of jobs a second, and a trim once a minute, at most drainCalls
// full calls, would let the set grow far beyond its count. Each tick costs
// one call while the set is within its bounds; a tick that ends with full
// calls (the set is still beyond them: the queue completes more than
// drainCalls batches a tick) goes on at once, in calls of batchLimit, so
// the trim keeps pace with any rate of completions: deleting a job costs
// Redis less than completing it.
//
// A queue that retains nothing costs nothing: its loop makes one call at
// the start of a term and, once a call finds nothing to delete, returns.
// That call deletes the completed jobs left from when the queue retained
// some (a configuration changed, and a restart began the term), which no
// trim would reach otherwise.
func (c *Carrier) completedLoop(ctx context.Context, q Queue, field string, log *slog.Logger) error {
	retain := q.CompletedMaxJobs > 0
	t := time.NewTicker(c.cfg.CompletedTrimInterval)
	defer t.Stop()
	for {
		deleted := 0
		err := drain(ctx, log, "trim the completed set", func() (int, error) {
			r, err := c.st.TrimCompleted(ctx, q.Name, field, q.CompletedMaxJobs, q.CompletedMaxAge, batchLimit)
			deleted += r.ByAge + r.ByCount
			return r.ByAge + r.ByCount, err
		})
		if deleted > 0 {
			log.Debug("trimmed the completed set", "deleted", deleted)
		}
		switch {
		case errors.Is(err, ErrNotLeader):
			return err
		case !retain && err == nil && deleted < drainCalls*batchLimit:
			return nil // nothing retained is left
		case err == nil && deleted == drainCalls*batchLimit:
			if ctx.Err() != nil {
				return nil
			}
			continue // still behind: on at once
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
