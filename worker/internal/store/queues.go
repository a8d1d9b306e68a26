package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
)

// AddQueues records queue names in the set of known queues. When Redis is
// out of memory and refuses the write, names already recorded are not an
// error: a daemon restarting while Redis is full still starts; otherwise
// the error matches ErrOOM.
func (s *Store) AddQueues(ctx context.Context, queues ...string) error {
	if len(queues) == 0 {
		return nil
	}
	key := QueuesKey(s.prefix)
	err := markOOM(s.c.Do(ctx, s.c.B().Sadd().Key(key).Member(queues...).Build()).Error())
	if errors.Is(err, ErrOOM) {
		known, kerr := s.c.Do(ctx, s.c.B().Smismember().Key(key).Member(queues...).Build()).AsIntSlice()
		if kerr == nil && !slices.Contains(known, 0) {
			return nil
		}
	}
	if err != nil {
		return fmt.Errorf("record queue names: %w", err)
	}
	return nil
}

// Queues returns the known queue names.
func (s *Store) Queues(ctx context.Context) ([]string, error) {
	names, err := s.c.Do(ctx, s.c.B().Smembers().Key(QueuesKey(s.prefix)).Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("list queues: %w", err)
	}
	return names, nil
}

// Ping checks that Redis answers (a failure counts in the Redis metrics as
// op "ping").
func (s *Store) Ping(ctx context.Context) error {
	return s.c.Do(ctx, s.c.B().Ping().Build()).Error()
}
