package admin

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// ErrQueueInUse is the error of Client.Forget refusing to forget a queue
// that something still holds; the error says what.
var ErrQueueInUse = errors.New("queue in use")

// forgetTries is how many times Forget checks and forgets when the
// queue changes between its look and the script's own check.
const forgetTries = 3

// Forget removes a queue an operator retired: its leftover keys are
// deleted and its name leaves the set of known queues
// (rediskeys.QueuesKey), so Queues no longer lists it. A Daemon's leader
// does the same on a timer for every unused queue; Forget does it now, for
// one queue, by the same rule and the same script.
//
// The rule: a queue is in use, and Forget refuses with an error
// wrapping ErrQueueInUse that says what holds it, while
//   - it holds a job in any state: scheduled, ready, active or dead
//     (purge the dead set first: Triage with TriagePurge). Completed jobs
//     (worker.QueueOptions.RetainCompleted) do not hold it: they are deleted with
//     the rest, since only a leader of the queue trims them;
//   - a live process serves it (a Daemon with a handler for it: stop it or
//     remove the handler first), or its leader lock is still held (the last process releases it when
//     it stops; it lapses within worker.Config.LeaderLease of a crash);
//   - it is paused (Resume it: a pause is an operator's decision that a
//     forget must not undo);
//   - it remembers unique keys or retained ids whose window has not ended
//     (worker.JobSpec.UniqueFor, worker.QueueOptions.IDRetention), or the last fire times
//     of periodic schedules: only a leader of the queue forgets those (when
//     their window ends, and 7 days after a schedule left the configuration),
//     so a retired queue keeps them until a Daemon serves it again or an
//     operator deletes the key (<prefix>:{<queue>}:unique,
//     rediskeys.Queue.Unique, and <prefix>:{<queue>}:periodic).
//
// The check and the deletion are one script call, so a job enqueued
// meanwhile is never touched. A producer that enqueues to the queue just
// after it was forgotten gets it listed again when its worker.Client
// records the queue name next (within a minute; at its next Enqueue for
// this Client). What daemons served of the queue is forgotten with it:
// Enqueue warns of the queue again until a daemon serves it. Forgetting a
// queue that is not known is no error.
func (c *Client) Forget(ctx context.Context, queue string) error {
	if err := worker.ValidateQueueName(queue); err != nil {
		return err
	}
	parts, err := c.core.Layer.Partitions(ctx, queue)
	if err != nil {
		return err
	}
	// Partition 0 last: it holds the layout, which names the others.
	parts = append(slices.Clone(parts[1:]), parts[0])
	for range forgetTries {
		for _, p := range parts {
			use, err := c.core.St.QueueUse(ctx, p)
			if err != nil {
				return err
			}
			if use.InUse() {
				where := ""
				if len(parts) > 1 {
					where = " (partition " + p + ")"
				}
				return fmt.Errorf("forget queue %q%s: %w: %s", queue, where, ErrQueueInUse, strings.Join(useReasons(use), ", "))
			}
		}
		all := true
		for _, p := range parts {
			ok, err := c.core.St.ForgetQueue(ctx, p)
			if err != nil {
				return err
			}
			all = all && ok
		}
		if all {
			// Record the name again at this Client's next enqueue to it,
			// routed by the layout of the queue as it is then.
			c.core.Layer.Forget(queue)
			c.renewProducer()
			c.core.Served.Forget(queue)
			// What daemons served of it goes too: enqueues to it warn again.
			return c.core.St.ForgetServed(ctx, queue)
		}
		// Something arrived between the look and the script: look again.
	}
	return fmt.Errorf("forget queue %q: %w: it changed while being checked, %d times; try again", queue, ErrQueueInUse, forgetTries)
}

// useReasons says what of u holds a queue, in an operator's words.
func useReasons(u store.Use) []string {
	var out []string
	jobs := func(n int64, state string) {
		if n > 0 {
			out = append(out, fmt.Sprintf("%d %s %s", n, state, plural(n, "job", "jobs")))
		}
	}
	s := u.Stats
	jobs(s.Scheduled, "scheduled")
	jobs(s.Ready, "ready")
	jobs(s.Active, "active")
	jobs(s.Dead, "dead")
	if s.Scheduled+s.Ready+s.Active+s.Dead == 0 && u.Records > 0 {
		out = append(out, fmt.Sprintf("%d job %s in no state", u.Records, plural(u.Records, "record", "records")))
	}
	if n := int64(len(u.Processes)); n > 0 {
		out = append(out, fmt.Sprintf("served by %d %s (%s)", n, plural(n, "process", "processes"), strings.Join(u.Processes, ", ")))
	}
	if u.Leader {
		out = append(out, "its leader lock is held")
	}
	if s.Paused {
		out = append(out, "paused (resume it first)")
	}
	if u.Unique > 0 {
		out = append(out, fmt.Sprintf("%d %s remembered", u.Unique, plural(u.Unique, "unique key or retained id", "unique keys or retained ids")))
	}
	if u.Periodic > 0 {
		out = append(out, fmt.Sprintf("the last fire times of %d periodic %s remembered", u.Periodic, plural(u.Periodic, "schedule", "schedules")))
	}
	return out
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
