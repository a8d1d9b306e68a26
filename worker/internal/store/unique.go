package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

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

// SetIDRetention sets how long a caller-supplied id of queue stays refused
// after its job finished (0 = not at all: refused only while the job
// exists). The daemons serving the queue write it at start; enqueue.lua
// reads it.
func (s *Store) SetIDRetention(ctx context.Context, queue string, d time.Duration) error {
	if d > MaxUniqueFor {
		return fmt.Errorf("set id retention of %s: %s is over the limit of %s", queue, d, MaxUniqueFor)
	}
	k := s.Keys(queue)
	var err error
	if d <= 0 {
		err = s.c.Do(ctx, s.c.B().Hdel().Key(k.Settings).Field("id_retention").Build()).Error()
	} else {
		err = s.c.Do(ctx, s.c.B().Hset().Key(k.Settings).FieldValue().FieldValue("id_retention", strconv.FormatInt(d.Milliseconds(), 10)).Build()).Error()
	}
	if err != nil {
		return fmt.Errorf("set id retention of %s: %w", queue, err)
	}
	return nil
}
