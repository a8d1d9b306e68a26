package store

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Purge deletes dead jobs of queue, or cancelled ones (from: SetDead or
// SetCancelled). deleted[i] reports whether ids[i] was in that set and was
// deleted; jobs in other sets are never touched. When until is not zero,
// jobs that entered the set after it are spared too.
func (s *Store) Purge(ctx context.Context, queue string, from Set, ids []string, until time.Time) (deleted []bool, err error) {
	k := s.Keys(queue)
	set, err := k.Kept(from)
	if err != nil {
		return nil, err
	}
	untilArg := ""
	if !until.IsZero() {
		untilArg = msArg(until)
	}
	deleted = make([]bool, 0, len(ids))
	for batch := range slices.Chunk(ids, MaxBatch) {
		flags, err := script.Purge.Exec(ctx, s.c, []string{k.Jobs, set, k.State, k.Opts}, append([]string{untilArg}, batch...)).AsIntSlice()
		if err != nil {
			return deleted, fmt.Errorf("purge %s: %w", queue, err)
		}
		for _, f := range flags {
			deleted = append(deleted, f == 1)
		}
	}
	return deleted, nil
}
