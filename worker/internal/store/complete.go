package store

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// SetCompleted is the set of finished jobs a queue retains (complete.lua).
const SetCompleted Set = "completed"

// Completion is one finished job for Complete: its token and what its
// handler returned (nil for nothing).
type Completion struct {
	Token  Token
	Result []byte
}

// MaxCompleteBytes bounds the results one complete.lua call carries:
// Complete splits a batch whose results add up to more, so that a call
// stays short for Redis (and within its query buffer) whatever
// Config.MaxResultBytes allows. A result larger than the bound goes in a
// call of its own.
const MaxCompleteBytes = 4 << 20

// Complete is Ack for a queue that retains finished jobs: each job held
// under its token leaves active and enters the completed set with its
// result and finish time (the Redis clock), keeping its record and state
// entry until TrimCompleted deletes it. Jobs not active under the given
// claim are skipped, as Ack skips them. It returns how many it moved. A
// call of complete.lua carries at most MaxBatch jobs and MaxCompleteBytes
// of results (completeBatches).
func (s *Store) Complete(ctx context.Context, queue string, done []Completion) (int, error) {
	k := s.Keys(queue)
	keys := append(append(ackKeys(k), k.Completed, k.Results), k.keySet()...)
	moved := 0
	for batch := range completeBatches(done) {
		args := reportArgs(make([]string, 0, 1+2*len(batch)), batch, func(d Completion) Token { return d.Token }, func(d Completion) (string, bool) {
			return string(d.Result), len(d.Result) > 0
		})
		args = slices.Insert(args, 1, k.Wake) // after m: the channel of keys' wake-ups
		n, err := script.Complete.Exec(ctx, s.c, keys, args).AsInt64()
		if err != nil {
			return moved, fmt.Errorf("complete %s: %w", queue, err)
		}
		moved += int(n)
	}
	return moved, nil
}

// completeBatches yields done in order, in batches of at most MaxBatch
// jobs whose results add up to at most MaxCompleteBytes, but for a result
// larger than that, which is a batch of its own.
func completeBatches(done []Completion) iter.Seq[[]Completion] {
	return func(yield func([]Completion) bool) {
		from, size := 0, 0
		for i, d := range done {
			if i > from && (i-from == MaxBatch || size+len(d.Result) > MaxCompleteBytes) {
				if !yield(done[from:i]) {
					return
				}
				from, size = i, 0
			}
			size += len(d.Result)
		}
		if from < len(done) {
			yield(done[from:])
		}
	}
}

// TrimCompleted deletes the oldest completed jobs of queue beyond maxJobs
// and those finished more than maxAge ago (0 = no age bound), at most
// limit per call, fenced by the leader lock field leader: the same script
// as TrimDead (lua/trim.lua), on the completed set. A job's record, state
// entry and result go with it, and its id is free again.
func (s *Store) TrimCompleted(ctx context.Context, queue, leader string, maxJobs int, maxAge time.Duration, limit int) (Trimmed, error) {
	ms := int64(0)
	if maxAge > 0 {
		ms = max(maxAge.Milliseconds(), 1)
	}
	t, err := s.trim(ctx, queue, s.Keys(queue).Completed, leader, maxJobs, ms, limit)
	if err != nil {
		return Trimmed{}, fmt.Errorf("trim completed %s: %w", queue, err)
	}
	return t, nil
}

// completed fills in what Get and List read of a completed job beside its
// record: its result (nil for none), and the attempt that succeeded, which
// its state entry does not count (complete.lua keeps the entry as it was,
// with the attempts that failed). Its finish time is the Score they return.
func completed(r *Record, result string) {
	if result != "" {
		r.Result = []byte(result)
	}
	r.Attempt++
}
