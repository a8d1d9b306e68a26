package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Trimmed counts what one TrimDead, TrimCompleted or TrimCancelled call
// deleted.
type Trimmed struct {
	ByAge   int // in the set for longer than the age limit
	ByCount int // the oldest beyond the count limit
}

// TrimDead deletes up to limit dead jobs of queue: first those that died
// more than maxAge ago, then the oldest beyond maxJobs. Fenced like Recover.
func (s *Store) TrimDead(ctx context.Context, queue, leader string, maxJobs int, maxAge time.Duration, limit int) (Trimmed, error) {
	t, err := s.trim(ctx, queue, s.Keys(queue).Dead, leader, maxJobs, max(maxAge.Milliseconds(), 1), limit)
	if err != nil {
		return Trimmed{}, fmt.Errorf("trim dead %s: %w", queue, err)
	}
	return t, nil
}

// TrimCancelled deletes up to limit cancelled jobs of queue (Cancel):
// first those cancelled more than maxAge ago (0 = no age bound), then the
// oldest beyond maxJobs. Fenced like Recover.
func (s *Store) TrimCancelled(ctx context.Context, queue, leader string, maxJobs int, maxAge time.Duration, limit int) (Trimmed, error) {
	ms := int64(0)
	if maxAge > 0 {
		ms = max(maxAge.Milliseconds(), 1)
	}
	t, err := s.trim(ctx, queue, s.Keys(queue).Cancelled, leader, maxJobs, ms, limit)
	if err != nil {
		return Trimmed{}, fmt.Errorf("trim cancelled %s: %w", queue, err)
	}
	return t, nil
}

// trim runs lua/trim.lua on set, the dead, completed or cancelled set of queue;
// maxAgeMs 0 means no age limit.
func (s *Store) trim(ctx context.Context, queue, set, leader string, maxJobs int, maxAgeMs int64, limit int) (Trimmed, error) {
	k := s.Keys(queue)
	a, b, err := fencedPair(script.Trim.Exec(ctx, s.c, []string{k.Jobs, set, k.Leader, k.State, k.Opts, k.Results},
		[]string{leader, strconv.Itoa(maxJobs), strconv.FormatInt(maxAgeMs, 10), strconv.Itoa(min(limit, MaxBatch))}))
	return Trimmed{ByAge: a, ByCount: b}, err
}
