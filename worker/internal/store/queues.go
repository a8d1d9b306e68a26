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
	err := markOOM(s.c.Do(ctx, s.c.B().Sadd().Key(QueuesKey(s.prefix)).Member(queues...).Build()).Error())
	if errors.Is(err, ErrOOM) {
		known, kerr := s.QueuesKnown(ctx, queues...)
		if kerr == nil && !slices.Contains(known, false) {
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

// ScanQueues reads about count known queue names from SSCAN cursor cur
// on, and returns them with the cursor to go on from (0 after the last):
// SSCAN's promise, a name in the set for the whole walk is returned at
// least once.
func (s *Store) ScanQueues(ctx context.Context, cur uint64, count int) ([]string, uint64, error) {
	e, err := s.c.Do(ctx, s.c.B().Sscan().Key(QueuesKey(s.prefix)).Cursor(cur).Count(int64(count)).Build()).AsScanEntry()
	if err != nil {
		return nil, 0, fmt.Errorf("list queues: %w", err)
	}
	return e.Elements, e.Cursor, nil
}

// QueuesKnown reports, for each name, whether it is a known queue: one
// SMISMEMBER.
func (s *Store) QueuesKnown(ctx context.Context, names ...string) ([]bool, error) {
	if len(names) == 0 {
		return nil, nil
	}
	n, err := s.c.Do(ctx, s.c.B().Smismember().Key(QueuesKey(s.prefix)).Member(names...).Build()).AsIntSlice()
	if err != nil {
		return nil, fmt.Errorf("look queues up: %w", err)
	}
	out := make([]bool, len(n))
	for i, v := range n {
		out[i] = v == 1
	}
	return out, nil
}

// QueueCount is the number of known queues: one SCARD.
func (s *Store) QueueCount(ctx context.Context) (int64, error) {
	n, err := s.c.Do(ctx, s.c.B().Scard().Key(QueuesKey(s.prefix)).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("count queues: %w", err)
	}
	return n, nil
}

// Ping checks that Redis answers (a failure counts in the Redis metrics as
// op "ping").
func (s *Store) Ping(ctx context.Context) error {
	return s.c.Do(ctx, s.c.B().Ping().Build()).Error()
}
