package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// ForgetQueues removes from the set of known queues the names of queues no
// longer in use: no job in any state, no process serving them, no leader,
// no periodic schedule, and not paused (a paused queue stays paused, and
// listed, until an operator resumes it). Their leftover keys (the pins, the last claim
// token, the state hash, the rate window and the history) are deleted in the same script
// call that checks the queue is unused, so a job enqueued meanwhile is never
// touched. The queues in keep (the ones the caller serves) are left alone.
// It returns the names it removed, sorted.
//
// The name leaves the set in a second step: a producer that enqueues to the
// queue between the two is listed again when its Client records the name
// next (Client re-records its queues every minute), or when a process that
// serves the queue starts.
func (s *Store) ForgetQueues(ctx context.Context, keep []string) ([]string, error) {
	names, err := s.Queues(ctx)
	if err != nil {
		return nil, err
	}
	var candidates []string
	var calls []script.Call
	for _, q := range names {
		if slices.Contains(keep, q) {
			continue
		}
		candidates = append(candidates, q)
		calls = append(calls, script.Call{Keys: forgetKeys(s.Keys(q))})
	}
	var gone []string
	for i, res := range script.Forget.ExecMulti(ctx, s.c, calls...) {
		n, err := res.AsInt64()
		if err != nil {
			return nil, fmt.Errorf("forget queue %s: %w", candidates[i], err)
		}
		if n == 1 {
			gone = append(gone, candidates[i])
		}
	}
	if len(gone) == 0 {
		return nil, nil
	}
	slices.Sort(gone)
	if err := s.c.Do(ctx, s.c.B().Srem().Key(QueuesKey(s.prefix)).Member(gone...).Build()).Error(); err != nil {
		return nil, fmt.Errorf("forget queue names %v: %w", gone, err)
	}
	return gone, nil
}
