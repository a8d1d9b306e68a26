package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Requeue moves dead jobs of queue, or cancelled ones (from: SetDead or
// SetCancelled), back to due now with their attempts reset. moved[i]
// reports whether ids[i] was in that set.
func (s *Store) Requeue(ctx context.Context, queue string, from Set, ids []string) (moved []bool, err error) {
	k := s.Keys(queue)
	set, err := k.Kept(from)
	if err != nil {
		return nil, err
	}
	moved = make([]bool, 0, len(ids))
	for batch := range slices.Chunk(ids, MaxBatch) {
		flags, err := script.Requeue.Exec(ctx, s.c, append([]string{k.Jobs, k.Due, set, k.State, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp}, k.keySet()...), append([]string{k.Wake}, batch...)).AsIntSlice()
		if err != nil {
			return moved, fmt.Errorf("requeue %s: %w", queue, err)
		}
		for _, f := range flags {
			moved = append(moved, f == 1)
		}
	}
	return moved, nil
}
