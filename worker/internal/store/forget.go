package store

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/rueidis"

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
// A queue split into partitions is left alone: its partitions are forgotten
// together, by an operator (Client.ForgetQueue).
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
	split, err := s.splitQueues(ctx, names)
	if err != nil {
		return nil, err
	}
	var candidates []string
	var calls []script.Call
	for i, q := range names {
		if slices.Contains(keep, q) || split[i] {
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

// splitQueues reports, for each queue, whether its settings record a
// layout of several partitions (now or still draining), in one round trip.
func (s *Store) splitQueues(ctx context.Context, queues []string) ([]bool, error) {
	out := make([]bool, len(queues))
	if len(queues) == 0 {
		return out, nil
	}
	cmds := make([]rueidis.Completed, len(queues))
	for i, q := range queues {
		cmds[i] = s.c.B().Hexists().Key(s.Keys(q).Settings).Field(fieldPartitions).Build()
	}
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		n, err := r.AsInt64()
		if err != nil {
			return nil, fmt.Errorf("read the partitions of %s: %w", queues[i], err)
		}
		out[i] = n == 1
	}
	return out, nil
}
