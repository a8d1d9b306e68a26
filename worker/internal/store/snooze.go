package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Snooze returns active jobs to due at now+delay without spending their
// attempt, and returns how many moved.
func (s *Store) Snooze(ctx context.Context, queue string, toks []Token, delay time.Duration) (int, error) {
	k := s.Keys(queue)
	moved := 0
	for batch := range slices.Chunk(toks, MaxBatch) {
		args := tokenArgs([]string{k.Wake, strconv.FormatInt(delay.Milliseconds(), 10)}, batch)
		n, err := script.Snooze.Exec(ctx, s.c, append([]string{k.Due, k.Active, k.Claims, k.DueHigh, k.DueLow, k.Opts}, k.keySet()...), args).AsInt64()
		if err != nil {
			return moved, fmt.Errorf("snooze %s: %w", queue, err)
		}
		moved += int(n)
	}
	return moved, nil
}
