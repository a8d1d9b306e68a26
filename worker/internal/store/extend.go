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

// Extend renews the leases of running jobs, grouped by queue, in one round
// trip. It returns, per queue, the tokens whose lease could not be renewed
// because the job is no longer held under that claim. A failed call does not
// stop the others: their results are returned with the joined errors.
func (s *Store) Extend(ctx context.Context, byQueue map[string][]Token, lease time.Duration) (lost map[string][]Token, err error) {
	var queues []string
	var calls []script.Call
	leaseArg := strconv.FormatInt(lease.Milliseconds(), 10)
	for queue, toks := range byQueue {
		k := s.Keys(queue)
		for batch := range slices.Chunk(toks, MaxBatch) {
			queues = append(queues, queue)
			calls = append(calls, script.Call{Keys: []string{k.Active, k.Claims}, Args: tokenArgs([]string{leaseArg}, batch)})
		}
	}
	lost = make(map[string][]Token)
	var errs []error
	for i, res := range script.Extend.ExecMulti(ctx, s.c, calls...) {
		vals, err := res.AsStrSlice()
		if err == nil && len(vals)%2 != 0 {
			err = fmt.Errorf("unexpected reply of %d values", len(vals))
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("extend %s: %w", queues[i], err))
			continue
		}
		for j := 0; j < len(vals); j += 2 {
			claim, _ := strconv.ParseInt(vals[j+1], 10, 64)
			lost[queues[i]] = append(lost[queues[i]], Token{ID: vals[j], Claim: claim})
		}
	}
	return lost, errors.Join(errs...)
}
