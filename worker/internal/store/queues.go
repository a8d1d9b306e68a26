package store

import (
	"context"
	"fmt"
)

// AddQueues records queue names in the set of known queues.
func (s *Store) AddQueues(ctx context.Context, queues ...string) error {
	if len(queues) == 0 {
		return nil
	}
	if err := s.c.Do(ctx, s.c.B().Sadd().Key(QueuesKey(s.prefix)).Member(queues...).Build()).Error(); err != nil {
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
