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
	return s.snooze(ctx, queue, toks, strconv.FormatInt(delay.Milliseconds(), 10))
}

// MaxKeyLimited is the longest a key is limited by SnoozeLimited.
const MaxKeyLimited = 24 * time.Hour

// SnoozeLimited is Snooze that also limits the keys of the keyed jobs
// moved until now+delay (at most MaxKeyLimited; the later of that and a
// limit already set): none of their jobs starts before then, while other
// keys go on (lua/snooze.lua).
func (s *Store) SnoozeLimited(ctx context.Context, queue string, toks []Token, delay time.Duration) (int, error) {
	return s.snooze(ctx, queue, toks, strconv.FormatInt(min(delay, MaxKeyLimited).Milliseconds(), 10)+";k")
}

func (s *Store) snooze(ctx context.Context, queue string, toks []Token, delay string) (int, error) {
	k := s.Keys(queue)
	moved := 0
	for batch := range slices.Chunk(toks, MaxBatch) {
		args := tokenArgs([]string{k.Wake, delay}, batch)
		n, err := script.Snooze.Exec(ctx, s.c, append([]string{k.Due, k.Active, k.Claims, k.DueHigh, k.DueLow, k.Opts}, k.keySet()...), args).AsInt64()
		if err != nil {
			return moved, fmt.Errorf("snooze %s: %w", queue, err)
		}
		moved += int(n)
	}
	return moved, nil
}
