package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// ErrNotLeader says a fenced call found that the caller no longer holds the
// queue's leader lock; it changed nothing.
var ErrNotLeader = errors.New("not the queue's leader (the leader lock is held by another process or by none)")

// Recovered counts what one Recover call did.
type Recovered struct {
	Due  int // back to due, attempt still spent
	Dead int // out of attempts: moved to dead
}

// Recover returns up to limit jobs of queue whose lease expired to due, or to
// dead when they have no attempts left (defaultMax applies to jobs enqueued
// without their own max attempts). leader is the caller's field in the
// queue's leader lock; a caller that lost the lock gets ErrNotLeader.
func (s *Store) Recover(ctx context.Context, queue, leader string, limit, defaultMax int) (Recovered, error) {
	k := s.Keys(queue)
	a, b, err := fencedPair(script.Recover.Exec(ctx, s.c, []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Leader, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex, k.KeyIDs, k.KeyDue, k.KeyReady, k.KeyWait, k.KeyState, k.KeyCount, k.KeyConf},
		[]string{k.Wake, strconv.Itoa(min(limit, MaxBatch)), strconv.Itoa(defaultMax), leader}))
	if err != nil {
		return Recovered{}, fmt.Errorf("recover %s: %w", queue, err)
	}
	return Recovered{Due: a, Dead: b}, nil
}

// fencedPair reads the {a, b} reply of a fenced carrier script; {-1, 0}
// means the caller is not the leader.
func fencedPair(res rueidis.RedisResult) (a, b int, err error) {
	n, err := res.AsIntSlice()
	switch {
	case err != nil:
		return 0, 0, err
	case len(n) != 2:
		return 0, 0, fmt.Errorf("unexpected reply of %d values", len(n))
	case n[0] == -1:
		return 0, 0, ErrNotLeader
	}
	return int(n[0]), int(n[1]), nil
}
