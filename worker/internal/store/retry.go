package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Retry returns a failed job to due after delay, recording errText as its
// last error. It reports false when the token is stale.
func (s *Store) Retry(ctx context.Context, queue string, tok Token, delay time.Duration, errText string) (bool, error) {
	return s.retry(ctx, queue, tok, "due", delay, errText)
}

// Kill moves a failed job to the dead set, recording errText as its last
// error. It reports false when the token is stale.
func (s *Store) Kill(ctx context.Context, queue string, tok Token, errText string) (bool, error) {
	return s.retry(ctx, queue, tok, "dead", 0, errText)
}

func (s *Store) retry(ctx context.Context, queue string, tok Token, to string, delay time.Duration, errText string) (bool, error) {
	k := s.Keys(queue)
	n, err := script.Retry.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex, k.KeyIDs, k.KeyDue, k.KeyReady, k.KeyWait, k.KeyState, k.KeyCount, k.KeyConf},
		[]string{k.Wake, tok.ID, strconv.FormatInt(tok.Claim, 10), to, strconv.FormatInt(delay.Milliseconds(), 10), errText}).AsInt64()
	if err != nil {
		return false, fmt.Errorf("move %s job %q to %s: %w", queue, tok.ID, to, err)
	}
	return n == 1, nil
}
