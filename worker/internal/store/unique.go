package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// ExpiredUnique counts what one ExpireUnique call did.
type ExpiredUnique struct {
	Forgotten int // unique keys and retained ids deleted
	Looked    int // window entries read: Looked == limit means call again
}

// ExpireUnique forgets up to limit unique keys and retained ids of queue
// whose window has ended (lua/uniq_expire.lua). Fenced like Recover.
func (s *Store) ExpireUnique(ctx context.Context, queue, leader string, limit int) (ExpiredUnique, error) {
	k := s.Keys(queue)
	a, b, err := fencedPair(script.UniqExpire.Exec(ctx, s.c, []string{k.Unique, k.UniqueExp, k.Jobs, k.Leader},
		[]string{leader, strconv.Itoa(min(limit, MaxBatch))}))
	if err != nil {
		return ExpiredUnique{}, fmt.Errorf("expire unique keys %s: %w", queue, err)
	}
	return ExpiredUnique{Forgotten: a, Looked: b}, nil
}
