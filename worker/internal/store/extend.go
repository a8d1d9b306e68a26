package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Lost is a running job whose lease Extend could not renew: it is no
// longer held under that claim.
type Lost struct {
	Token
	// Cancelled reports that the job was cancelled while it ran (Cancel):
	// it is in the dead set now. Otherwise it was recovered, finished
	// elsewhere or deleted.
	Cancelled bool
}

// Extend renews the leases of running jobs, grouped by queue, in one round
// trip. It returns, per queue, the jobs whose lease could not be renewed
// because the job is no longer held under that claim. A failed call does not
// stop the others: their results are returned with the joined errors, one
// *QueueError per failed queue, so the caller knows which leases were not
// renewed (FailedQueues). A Renewal's Progress is stored with the lease in
// the same call (see Progress).
func (s *Store) Extend(ctx context.Context, byQueue map[string][]Renewal, lease time.Duration) (lost map[string][]Lost, err error) {
	var queues []string
	var calls []script.Call
	leaseArg := strconv.FormatInt(lease.Milliseconds(), 10)
	for queue, rs := range byQueue {
		k := s.Keys(queue)
		for batch := range slices.Chunk(rs, MaxBatch) {
			queues = append(queues, queue)
			calls = append(calls, script.Call{Keys: []string{k.Active, k.Claims, k.Dead, k.State, k.Cancelled}, Args: renewalArgs(leaseArg, batch)})
		}
	}
	lost = make(map[string][]Lost)
	var errs []error
	for i, res := range script.Extend.ExecMulti(ctx, s.c, calls...) {
		vals, err := res.AsStrSlice()
		if err == nil && len(vals)%3 != 0 {
			err = fmt.Errorf("unexpected reply of %d values", len(vals))
		}
		if err != nil {
			errs = append(errs, &QueueError{Queue: queues[i], Op: "extend", Err: err})
			continue
		}
		for j := 0; j < len(vals); j += 3 {
			claim, _ := strconv.ParseInt(vals[j+1], 10, 64)
			lost[queues[i]] = append(lost[queues[i]], Lost{Token: Token{ID: vals[j], Claim: claim}, Cancelled: vals[j+2] == CancelledError})
		}
	}
	return lost, errors.Join(errs...)
}

// renewalArgs is extend.lua's ARGV for renewals: the lease, the number of
// progress reports, the id/claim pairs, then each report's position and
// progress.
func renewalArgs(lease string, rs []Renewal) []string {
	args := make([]string, 1, 2+2*len(rs))
	args[0] = lease
	return reportArgs(args, rs, func(r Renewal) Token { return r.Token }, func(r Renewal) (string, bool) {
		return encodeProgress(r.Progress)
	})
}

// QueueError is the failure of one queue's call in a call that spans queues.
type QueueError struct {
	Queue string
	Op    string // what failed: "extend"
	Err   error
}

func (e *QueueError) Error() string { return e.Op + " " + e.Queue + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *QueueError) Unwrap() error { return e.Err }

// FailedQueues returns the queues named by the *QueueError values in err, a
// single error or a join of them; an error that names no queue fails them
// all, reported as all = true.
func FailedQueues(err error) (queues map[string]bool, all bool) {
	if err == nil {
		return nil, false
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	queues = make(map[string]bool, len(errs))
	for _, e := range errs {
		var qe *QueueError
		if !errors.As(e, &qe) {
			return nil, true
		}
		queues[qe.Queue] = true
	}
	return queues, false
}
