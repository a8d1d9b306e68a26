package store

import (
	"context"
	"fmt"

	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// Use is what keeps a queue in use, in the terms of lua/forget.lua: the
// script forgets a queue only when every count here is zero and nothing is
// set.
type Use struct {
	Stats Stats // its jobs by state, and its pause flag
	// Records counts the job records beyond the completed and cancelled
	// jobs' (all of them are in a state, unless the data is inconsistent). Completed jobs
	// keep no queue in use: forget.lua deletes them with the rest.
	Records   int64
	Processes []string // ids of the live processes that serve it (its fleet)
	Leader    bool     // its leader lock is held
	Periodic  int64    // periodic schedules whose last fire is remembered
	Unique    int64    // unique keys and retained ids remembered
}

// InUse reports whether anything of u keeps the queue from being
// forgotten; its completed jobs (Stats.Completed) do not.
func (u Use) InUse() bool {
	s := u.Stats
	return s.Ready+s.Scheduled+s.Active+s.Dead+s.Cancelled+u.Records+u.Periodic+u.Unique > 0 ||
		s.Paused || u.Leader || len(u.Processes) > 0
}

// QueueUse reads what keeps queue in use. Reading its fleet forgets the
// processes whose report expired, as Fleet does, so that a process that
// died without withdrawing does not keep the queue in use.
func (s *Store) QueueUse(ctx context.Context, queue string) (Use, error) {
	var u Use
	members, _, err := s.Fleet(ctx, queue)
	if err != nil {
		return Use{}, err
	}
	for _, m := range members {
		u.Processes = append(u.Processes, m.ID)
	}
	if u.Stats, err = s.Stats(ctx, queue); err != nil {
		return Use{}, err
	}
	k := s.Keys(queue)
	res := s.c.DoMulti(ctx,
		s.c.B().Hlen().Key(k.Jobs).Build(),
		s.c.B().Exists().Key(k.Leader).Build(),
		s.c.B().Hlen().Key(k.Periodic).Build(),
		s.c.B().Hlen().Key(k.Unique).Build(),
	)
	var n [4]int64
	for i, r := range res {
		if n[i], err = r.AsInt64(); err != nil {
			return Use{}, fmt.Errorf("read the use of queue %s: %w", queue, err)
		}
	}
	u.Records, u.Leader, u.Periodic, u.Unique = max(n[0]-u.Stats.Completed-u.Stats.Cancelled, 0), n[1] == 1, n[2], n[3]
	return u, nil
}

// ForgetQueue forgets one queue, by the rule and the script ForgetQueues
// uses (lua/forget.lua): when the queue holds nothing (see Use), the script
// deletes its leftover keys, and the name leaves the set of known queues.
// It reports false, changing nothing, when the script found the queue in
// use. A process that served the queue and died without withdrawing is
// forgotten first (QueueUse does it; call it before).
//
// As in ForgetQueues, the name leaves the set in a second step: a producer
// that enqueues between the two gets its queue listed again when its
// Client records the name next.
func (s *Store) ForgetQueue(ctx context.Context, queue string) (bool, error) {
	n, err := script.Forget.Exec(ctx, s.c, forgetKeys(s.Keys(queue)), nil).AsInt64()
	if err != nil {
		return false, fmt.Errorf("forget queue %s: %w", queue, err)
	}
	if n != 1 {
		return false, nil
	}
	if err := s.c.Do(ctx, s.c.B().Srem().Key(QueuesKey(s.prefix)).Member(queue).Build()).Error(); err != nil {
		return false, fmt.Errorf("forget queue name %s: %w", queue, err)
	}
	return true, nil
}

// forgetKeys are the KEYS of lua/forget.lua for the queue of k, in its
// order.
func forgetKeys(k Keys) []string {
	return []string{
		k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Leader, k.Periodic, k.Fleet, k.Paused,
		k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Settings, k.History, k.HistoryIndex, k.Completed, k.Results,
		k.Cancelled,
		k.KeyIDs, k.KeyDue, k.KeyReady, k.KeyWait, k.KeyState, k.KeyCount, k.KeyConf,
	}
}
