package store

import (
	"context"
	"fmt"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Stats counts the jobs of one queue by state.
type Stats struct {
	Ready     int64 // due now
	Scheduled int64 // due later
	Active    int64
	Dead      int64
	Paused    bool // the queue is paused (Store.Pause)
	// ReadyHigh and ReadyLow count the jobs of Ready at the high and low
	// priority levels.
	ReadyHigh, ReadyLow int64
}

// Stats counts the jobs of queue by state and reads its pause flag.
func (s *Store) Stats(ctx context.Context, queue string) (Stats, error) {
	k := s.Keys(queue)
	n, err := script.Stats.Exec(ctx, s.c, []string{k.Due, k.Active, k.Dead, k.Paused, k.DueHigh, k.DueLow}, nil).AsIntSlice()
	if err != nil {
		return Stats{}, fmt.Errorf("stats %s: %w", queue, err)
	}
	if len(n) != 8 {
		return Stats{}, fmt.Errorf("stats %s: unexpected reply of %d values", queue, len(n))
	}
	return Stats{Ready: n[0], Scheduled: n[1], Active: n[2], Dead: n[3], Paused: n[5] == 1, ReadyHigh: n[6], ReadyLow: n[7]}, nil
}

// Plus returns s with the sizes of o added (a queue's partitions summed);
// the pause flag is s's.
func (s Stats) Plus(o Stats) Stats {
	s.Ready += o.Ready
	s.Scheduled += o.Scheduled
	s.Active += o.Active
	s.Dead += o.Dead
	s.ReadyHigh += o.ReadyHigh
	s.ReadyLow += o.ReadyLow
	return s
}
