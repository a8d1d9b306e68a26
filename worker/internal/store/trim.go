package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Trimmed counts what one TrimDead call deleted.
type Trimmed struct {
	ByAge   int // dead for longer than the age limit
	ByCount int // the oldest beyond the count limit
}

// TrimDead deletes up to limit dead jobs of queue: first those that died
// more than maxAge ago, then the oldest beyond maxJobs. Fenced like Recover.
func (s *Store) TrimDead(ctx context.Context, queue, leader string, maxJobs int, maxAge time.Duration, limit int) (Trimmed, error) {
	k := s.Keys(queue)
	a, b, err := fencedPair(script.Trim.Exec(ctx, s.c, []string{k.Jobs, k.Dead, k.Leader, k.State, k.Opts},
		[]string{leader, strconv.Itoa(maxJobs), strconv.FormatInt(max(maxAge.Milliseconds(), 1), 10), strconv.Itoa(min(limit, MaxBatch))}))
	if err != nil {
		return Trimmed{}, fmt.Errorf("trim dead %s: %w", queue, err)
	}
	return Trimmed{ByAge: a, ByCount: b}, nil
}
