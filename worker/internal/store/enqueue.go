package store

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/rueidis"

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
	Priority    Priority
	Unique      Unique
	// Key is the job's key (lua/keys.lua): the job waits among its key's
	// jobs, and claims share slots among keys and keep each under its cap.
	// "" for none. 1 to 256 bytes without NUL (the worker package holds
	// it to the id rules).
	Key string
	// CallerID says the caller chose ID: it stays refused after the job
	// finished for the queue's id retention (SetIDRetention).
	CallerID bool
	// Headers are stored in the record (a c4 record); nil or empty for
	// none. Names must not hold '=' or a newline, values no newline (the
	// worker package validates them).
	Headers map[string]string
}

// Enqueued is the outcome of one job of EnqueueJobs.
type Enqueued struct {
	Added bool
	// Holder is the id of the job that holds the job's unique key, when the
	// job was refused for it (Added is false).
	Holder string
}

// Target is where an enqueue goes: a partition (a physical queue name) and
// the version of the queue's layout the caller routed by. A Version below
// 0 checks nothing but a partition's retirement (partition 0, never
// retired, then never refuses): a caller's last resort.
type Target struct {
	Partition string
	Version   int64
}

// Enqueue adds jobs to queue, MaxBatch per script call, all calls in one
// round trip. added[i] reports whether jobs[i] was written; false means its
// id exists and that job was left untouched. On error some batches may have
// been written: added holds the flags of the batches before the failed one,
// and enqueueing the same ids again is safe. A batch Redis refused for
// memory wrote nothing, and the error matches ErrOOM.
func (s *Store) Enqueue(ctx context.Context, queue string, jobs []NewJob) (added []bool, err error) {
	res, err := s.EnqueueJobs(ctx, Target{Partition: queue, Version: -1}, jobs)
	added = make([]bool, len(res))
	for i, r := range res {
		added[i] = r.Added
	}
	return added, err
}

// EnqueueJobs is Enqueue to a Target that also says, for a job refused for
// its unique key, which job holds the key. When the target refuses the
// caller's routing, nothing of that batch is written and the error matches
// ErrRetired or is a *StaleLayoutError.
func (s *Store) EnqueueJobs(ctx context.Context, to Target, jobs []NewJob) ([]Enqueued, error) {
	return enqueued(script.Enqueue.ExecMulti(ctx, s.c, s.enqueueCalls(to, jobs)...), len(jobs))
}

// enqueueCalls are the script calls that enqueue jobs to a target, MaxBatch
// jobs each.
func (s *Store) enqueueCalls(to Target, jobs []NewJob) []script.Call {
	k := s.Keys(to.Partition)
	version := ""
	if to.Version >= 0 {
		version = strconv.FormatInt(to.Version, 10)
	}
	var calls []script.Call
	for batch := range slices.Chunk(jobs, MaxBatch) {
		args := make([]string, 0, 4+len(batch)*6)
		args = append(args, k.Wake, strconv.Itoa(len(batch)), "0", version)
		var opts []string // position, options: only for the jobs that have any
		var hdrs []string // position, headers section: likewise
		for i := range batch {
			j := &batch[i]
			at := int64(-1)
			if !j.At.IsZero() {
				at = j.At.UnixMilli()
			}
			args = append(args, j.ID, strconv.FormatInt(at, 10), strconv.FormatInt(j.Delay.Milliseconds(), 10),
				strconv.Itoa(j.MaxAttempts), strconv.FormatInt(j.Timeout.Milliseconds(), 10), string(j.Payload))
			if o := j.options(); o != "" {
				opts = append(opts, strconv.Itoa(i+1), o)
			}
			if len(j.Headers) > 0 {
				hdrs = append(hdrs, strconv.Itoa(i+1), EncodeHeaders(j.Headers))
			}
		}
		args[2] = strconv.Itoa(len(opts) / 2)
		args = append(args, opts...)
		args = append(args, hdrs...)
		keys := []string{k.Jobs, k.Due, k.State, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Settings}
		if IsPartition(to.Partition) {
			keys = append(keys, k.Settings) // checked for retirement
		}
		if slices.ContainsFunc(batch, func(j NewJob) bool { return j.Key != "" }) {
			keys = append(keys, k.keySet()...)
		}
		calls = append(calls, script.Call{Keys: keys, Args: args})
	}
	return calls
}

// enqueued decodes the replies of enqueueCalls for jobs jobs: the
// outcomes of the batches up to the first that failed, and its error.
func enqueued(replies []rueidis.RedisResult, jobs int) ([]Enqueued, error) {
	out := make([]Enqueued, 0, jobs)
	for i, res := range replies {
		vals, err := res.ToArray()
		if err != nil {
			return out, fmt.Errorf("enqueue batch %d: %w", i+1, layoutRefusal(markOOM(err)))
		}
		for _, v := range vals {
			if n, err := v.ToInt64(); err == nil { // not AsInt64: a holder's id may read as a number
				out = append(out, Enqueued{Added: n == 1})
				continue
			}
			holder, _ := v.ToString()
			out = append(out, Enqueued{Holder: holder})
		}
	}
	return out, nil
}
