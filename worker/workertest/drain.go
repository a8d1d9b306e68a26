package workertest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/testhook"
)

// DrainTimeout is how long Drain waits for its queues to have nothing due
// and nothing running before it fails the test.
const DrainTimeout = time.Minute

// Drained is what one Drain ran: every attempt, in the order they ended.
type Drained struct {
	Attempts []*Attempt
}

// Count returns how many of the attempts ended with o.
func (d Drained) Count(o Outcome) int {
	n := 0
	for _, a := range d.Attempts {
		if a.Outcome == o {
			n++
		}
	}
	return n
}

// String lists the attempts, one a line, for test failure messages.
func (d Drained) String() string {
	if len(d.Attempts) == 0 {
		return "no attempt"
	}
	lines := make([]string, len(d.Attempts))
	for i, a := range d.Attempts {
		lines[i] = a.String()
	}
	return strings.Join(lines, "\n")
}

// Drain runs the jobs of reg's queues with reg's handlers on a real
// worker.Daemon (Store.Config), the same claims, retries, backoff, dead
// set and snoozes as in production, until none of reg's queues has a job
// due or running; then it stops the Daemon and returns every attempt it
// ran, with its outcome, error, result and progress reports. The jobs a
// handler enqueues run too, when they are due and their queue is reg's.
//
// The store's clock stands still while Drain runs: a retry after its
// backoff, a snoozed job or a job scheduled later stays scheduled, and
// Drain returns. Advance the clock (Store.Advance) and Drain again to run
// them; Attempt.Delay says by how much. Queues that are paused, and those
// whose rate limit's window is spent (the window moves with the store's
// clock), hold their due jobs: Drain returns without them only when
// paused, and otherwise fails the test after DrainTimeout.
//
// Drain starts a Daemon of its own: do not use it while one started by
// Start runs, which would take some of the jobs.
func (s *Store) Drain(t testing.TB, reg *worker.Registry) Drained {
	t.Helper()
	d, err := worker.NewDaemon(s.rdb, reg, s.cfg)
	if err != nil {
		t.Fatalf("workertest.Drain: worker.NewDaemon: %v", err)
	}
	busy, err := s.busy(t.Context(), reg.Queues())
	if err != nil {
		t.Fatalf("workertest.Drain: %v", err)
	}
	if busy == "" {
		return Drained{} // nothing due, nothing running: no Daemon to start
	}
	w := &watch{}
	testhook.Observe(d, w.attempt)
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	idleErr := s.waitIdle(t.Context(), reg.Queues(), w, done)
	cancel()
	if err := waitRun(done, s.cfg.ShutdownTimeout); err != nil {
		t.Fatalf("workertest.Drain: the Daemon: %v", err)
	}
	if idleErr != nil {
		t.Fatalf("workertest.Drain: %v; attempts so far:\n%s", idleErr, Drained{w.ended()})
	}
	return Drained{w.ended()}
}

// drainPoll is how often Drain looks at its queues.
const drainPoll = 5 * time.Millisecond

// waitIdle returns once queues have nothing due (but in a paused queue)
// and nothing running, for the length of one look at all of them with no
// handler running or starting meanwhile: only handlers enqueue while
// Drain runs, so nothing can become due behind the look's back.
func (s *Store) waitIdle(ctx context.Context, queues []string, w *watch, done <-chan error) error {
	deadline := time.NewTimer(DrainTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(drainPoll)
	defer tick.Stop()
	for {
		started, running := w.counts()
		busy, err := s.busy(ctx, queues)
		if err != nil {
			return err
		}
		if busy == "" && running == 0 {
			if again, _ := w.counts(); again == started {
				return nil
			}
		}
		select {
		case <-tick.C:
		case err := <-done:
			return fmt.Errorf("the Daemon stopped before its queues were done: %v", err)
		case <-deadline.C:
			return fmt.Errorf("after %s, %s", DrainTimeout, busy)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// busy describes the first of queues with a job due (and the queue not
// paused) or running; "" when there is none.
func (s *Store) busy(ctx context.Context, queues []string) (string, error) {
	for _, q := range queues {
		st, err := s.admin.Stats(ctx, q)
		if err != nil {
			return "", fmt.Errorf("stats of queue %q: %w", q, err)
		}
		if st.Active > 0 || st.Ready > 0 && !st.Paused {
			return fmt.Sprintf("queue %q still has %d jobs due and %d running", q, st.Ready, st.Active), nil
		}
	}
	return "", nil
}

// watch collects the attempts of a Daemon (testhook.Observe).
type watch struct {
	started atomic.Int64
	mu      sync.Mutex
	done    []*Attempt
}

// attempt is the Daemon's testhook.Watch.
func (w *watch) attempt(job any) (pool.Recorder, func(pool.Outcome, error)) {
	w.started.Add(1)
	rec := &recorder{}
	return rec, func(o pool.Outcome, err error) {
		a := rec.attempt(job.(*worker.Job), o, err)
		w.mu.Lock()
		defer w.mu.Unlock()
		w.done = append(w.done, a)
	}
}

// counts returns how many attempts started, and how many of them have
// not ended.
func (w *watch) counts() (started, running int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.started.Load()
	return n, n - int64(len(w.done))
}

// ended returns the attempts that ended, in order.
func (w *watch) ended() []*Attempt {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]*Attempt(nil), w.done...)
}
