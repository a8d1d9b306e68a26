package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// NewJob is one job to enqueue. Exactly one of At (absolute run-at) and Delay
// applies: At when it is not zero.
type NewJob struct {
	ID          string
	At          time.Time
	Delay       time.Duration
	MaxAttempts int           // 0 = the queue's default
	Timeout     time.Duration // 0 = the queue's default
	Payload     []byte
}

// Enqueue adds jobs to queue, MaxBatch per script call, all calls in one
// round trip. added[i] reports whether jobs[i] was written; false means its
// id exists and that job was left untouched. On error some batches may have
// been written: added holds the flags of the batches before the failed one,
// and enqueueing the same ids again is safe. A batch Redis refused for
// memory wrote nothing, and the error matches ErrOOM.
func (s *Store) Enqueue(ctx context.Context, queue string, jobs []NewJob) (added []bool, err error) {
	k := s.Keys(queue)
	var calls []script.Call
	for batch := range slices.Chunk(jobs, MaxBatch) {
		args := make([]string, 0, 2+len(batch)*6)
		args = append(args, k.Wake, strconv.Itoa(len(batch)))
		for _, j := range batch {
			at := int64(-1)
			if !j.At.IsZero() {
				at = j.At.UnixMilli()
			}
			args = append(args, j.ID, strconv.FormatInt(at, 10), strconv.FormatInt(j.Delay.Milliseconds(), 10),
				strconv.Itoa(j.MaxAttempts), strconv.FormatInt(j.Timeout.Milliseconds(), 10), string(j.Payload))
		}
		calls = append(calls, script.Call{Keys: []string{k.Jobs, k.Due, k.State}, Args: args})
	}
	added = make([]bool, 0, len(jobs))
	for i, res := range script.Enqueue.ExecMulti(ctx, s.c, calls...) {
		flags, err := res.AsIntSlice()
		if err != nil {
			return added, fmt.Errorf("enqueue batch %d: %w", i+1, markOOM(err))
		}
		for _, f := range flags {
			added = append(added, f == 1)
		}
	}
	return added, nil
}
