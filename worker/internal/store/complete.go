package store

import (
	"context"
	"errors"
	"time"
)

// SetCompleted is the set of finished jobs a queue retains (complete.lua).
const SetCompleted Set = "completed"

// Completion is one finished job for Complete: its token and what its
// handler returned (nil for nothing).
type Completion struct {
	Token  Token
	Result []byte
}

// Complete is Ack for a queue that retains finished jobs: each job held
// under its token leaves active and enters the completed set with its
// result and finish time. It returns how many it moved.
// TODO(helper C): replace this stub with lua/complete.lua.
func (s *Store) Complete(ctx context.Context, queue string, done []Completion) (int, error) {
	return 0, errors.New("complete: not implemented")
}

// TrimCompleted deletes the oldest completed jobs of queue beyond maxJobs
// and those finished more than maxAge ago (0 = no age bound), at most
// limit per call, fenced by the leader lock field leader.
// TODO(helper C): replace this stub.
func (s *Store) TrimCompleted(ctx context.Context, queue, leader string, maxJobs int, maxAge time.Duration, limit int) (Trimmed, error) {
	return Trimmed{}, errors.New("trim completed: not implemented")
}
