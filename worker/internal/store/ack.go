package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Ack deletes finished jobs of queue and returns how many were deleted; jobs
// not active under the given claim are skipped.
func (s *Store) Ack(ctx context.Context, queue string, toks []Token) (int, error) {
	k := s.Keys(queue)
	keys := append(ackKeys(k), k.keySet()...)
	done := 0
	for batch := range slices.Chunk(toks, MaxBatch) {
		n, err := script.Ack.Exec(ctx, s.c, keys, tokenArgs([]string{k.Wake}, batch)).AsInt64()
		if err != nil {
			return done, fmt.Errorf("ack %s: %w", queue, err)
		}
		done += int(n)
	}
	return done, nil
}

// ackKeys are ack.lua's KEYS, the first of complete.lua's.
func ackKeys(k Keys) []string {
	return []string{k.Jobs, k.Active, k.Claims, k.State, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex}
}
