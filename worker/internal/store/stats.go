package store

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Stats counts the jobs of one queue by state.
type Stats struct {
	Ready     int64 // due now
	Scheduled int64 // due later
	Active    int64
	Dead      int64
	Completed int64 // finished jobs retained (Complete)
	Cancelled int64 // cancelled jobs kept (Cancel)
	Paused    bool  // the queue is paused (Store.Pause)
	// ReadyHigh and ReadyLow count the jobs of Ready at the high and low
	// priority levels.
	ReadyHigh, ReadyLow int64
	// Keys counts the job keys that have waiting jobs (lua/keys.lua).
	Keys int64
}

// Stats counts the jobs of queue by state and reads its pause flag.
func (s *Store) Stats(ctx context.Context, queue string) (Stats, error) {
	return decodeStats(queue, script.Stats.Exec(ctx, s.c, statsKeys(s.Keys(queue)), nil))
}

// StatsOf reads the Stats of each queue (the partitions of one, say) in
// one round trip.
func (s *Store) StatsOf(ctx context.Context, queues []string) ([]Stats, error) {
	calls := make([]script.Call, len(queues))
	for i, q := range queues {
		calls[i] = script.Call{Keys: statsKeys(s.Keys(q))}
	}
	out := make([]Stats, len(queues))
	for i, res := range script.Stats.ExecMulti(ctx, s.c, calls...) {
		st, err := decodeStats(queues[i], res)
		if err != nil {
			return nil, err
		}
		out[i] = st
	}
	return out, nil
}

func statsKeys(k Keys) []string {
	return []string{k.Due, k.Active, k.Dead, k.Paused, k.DueHigh, k.DueLow, k.Completed, k.Cancelled, k.KeyIDs, k.KeyCount}
}

// decodeStats reads the reply of stats.lua for queue.
func decodeStats(queue string, res rueidis.RedisResult) (Stats, error) {
	n, err := res.AsIntSlice()
	if err != nil {
		return Stats{}, fmt.Errorf("stats %s: %w", queue, err)
	}
	if len(n) != 11 {
		return Stats{}, fmt.Errorf("stats %s: unexpected reply of %d values", queue, len(n))
	}
	return Stats{Ready: n[0], Scheduled: n[1], Active: n[2], Dead: n[3], Paused: n[5] == 1, ReadyHigh: n[6], ReadyLow: n[7], Completed: n[8], Cancelled: n[9], Keys: n[10]}, nil
}

// Total adds up the sizes of parts (the partitions of a queue, at least
// one); the queue is paused when every part is: a pause holds only once
// it reached them all.
func Total(parts []Stats) Stats {
	t := parts[0]
	for _, o := range parts[1:] {
		t.Paused = t.Paused && o.Paused
		t.Ready += o.Ready
		t.Scheduled += o.Scheduled
		t.Active += o.Active
		t.Dead += o.Dead
		t.Completed += o.Completed
		t.Cancelled += o.Cancelled
		t.ReadyHigh += o.ReadyHigh
		t.ReadyLow += o.ReadyLow
		t.Keys += o.Keys
	}
	return t
}
