package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// newDaemon is NewDaemon failing the test on an error; the test's cleanup
// stops the Daemon if the test did not.
func newDaemon(t *testing.T, rdb rueidis.Client, reg *worker.Registry, cfg worker.Config) *worker.Daemon {
	t.Helper()
	d, err := worker.NewDaemon(rdb, reg, cfg)
	if err != nil {
		t.Fatalf("NewDaemon: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(t.Context()), 15*time.Second)
		defer cancel()
		_ = d.Stop(ctx) // an error: never started, or stopped by the test already
	})
	return d
}

// startWithin calls Start and fails the test unless it returns nil within
// d.
func startWithin(t *testing.T, dm *worker.Daemon, d time.Duration) {
	t.Helper()
	begun := time.Now()
	if err := dm.Start(t.Context()); err != nil {
		t.Fatalf("Start = %v", err)
	}
	if took := time.Since(begun); took > d {
		t.Errorf("Start took %s, want at most %s", took, d)
	}
}

// TestDaemonStartStop: a Daemon started with Start runs jobs in the
// background; Stop drains it as Run's end does, and every job is either
// done or still due for the next Daemon: none is lost or left active.
func TestDaemonStartStop(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		slow := rec.Handler(func(ctx context.Context, job *worker.Job) error {
			select {
			case <-time.After(100 * time.Millisecond):
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
		reg := register(t, nil, "startstop", slow, worker.QueueOptions{Concurrency: 4, Partitions: 2})
		const n = 40
		ids := make([]string, n)
		for i := range ids {
			ids[i] = enqueue(t, c, worker.JobSpec{Queue: "startstop", Payload: fmt.Appendf(nil, "%d", i)})
		}

		d := newDaemon(t, rdb, reg, cfg)
		startWithin(t, d, 5*time.Second)
		if !d.Running() {
			t.Error("Running() = false once Start returned with Redis up")
		}
		testkit.Eventually(t, 10*time.Second, "8 jobs to finish", func() bool { return rec.Count() >= 8 })
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := d.Stop(ctx); err != nil {
			t.Fatalf("Stop = %v", err)
		}
		if d.Running() {
			t.Error("Running() = true after Stop")
		}
		if s, ok := d.Drained(); !ok || s.Returned != 0 {
			t.Errorf("Drained() = %+v, %v; want the running jobs finished, none returned", s, ok)
		}
		if err := d.Stop(ctx); err != nil {
			t.Errorf("a second Stop = %v, want nil, as the first", err)
		}
		st := stats(t, c, "startstop")
		if st.Active != 0 || int(st.Ready)+rec.Count() != n {
			t.Errorf("after Stop: %d active, %d ready, %d done; want none active, the rest (%d) ready",
				st.Active, st.Ready, rec.Count(), n-rec.Count())
		}

		startDaemon(t, rdb, reg, cfg) // the next one runs the rest
		for _, id := range ids {
			rec.WaitCalls(t, id, 1, 10*time.Second)
		}
		for _, id := range ids {
			if calls := rec.Of(id); len(calls) != 1 || calls[0].Err != nil {
				t.Errorf("job %s: %d calls (%v), want one that succeeded", id, len(calls), calls)
			}
		}
	})
}

// TestDaemonStopHard: when Stop's context ends before the drain, Stop
// cancels the running jobs (cause ErrShutdown) and puts them back due
// without spending an attempt, as Run does at the shutdown timeout.
func TestDaemonStopHard(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		cfg.ShutdownTimeout = time.Minute
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		started := make(chan struct{}, 1)
		block := rec.Handler(func(ctx context.Context, job *worker.Job) error {
			started <- struct{}{}
			<-ctx.Done()
			return context.Cause(ctx)
		})
		reg := register(t, nil, "hard", block, worker.QueueOptions{MaxAttempts: 3})
		id := enqueue(t, c, worker.JobSpec{Queue: "hard"})
		d := newDaemon(t, rdb, reg, cfg)
		startWithin(t, d, 5*time.Second)
		receive(t, started, 10*time.Second, "the job to start")

		ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
		defer cancel()
		begun := time.Now()
		if err := d.Stop(ctx); err != nil {
			t.Fatalf("Stop = %v", err)
		}
		if took := time.Since(begun); took > 5*time.Second {
			t.Errorf("Stop took %s with a 200ms context, want a hard stop soon after it ended", took)
		}
		calls := rec.Of(id)
		if len(calls) != 1 || !errors.Is(calls[0].Cause, worker.ErrShutdown) {
			t.Fatalf("calls = %+v, want one whose context ended with ErrShutdown", calls)
		}
		if s, _ := d.Drained(); s.Returned != 1 {
			t.Errorf("Drained().Returned = %d, want 1", s.Returned)
		}
		job := getJob(t, c, "hard", id)
		if job.State != worker.StateReady || job.Attempt != 0 {
			t.Errorf("job after the hard stop: state %s, attempt %d; want ready, no attempt spent", job.State, job.Attempt)
		}
	})
}

// TestDaemonLifecycleMisuse: each call out of order is an error that says
// so, and leaves the Daemon as it was.
func TestDaemonLifecycleMisuse(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	cfg := testConfig(t, testkit.Prefix(t))
	reg := register(t, nil, "misuse", worker.HandlerFunc(succeed), worker.QueueOptions{})
	d := newDaemon(t, rdb, reg, cfg)
	expect := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s = %v, want an error saying %q", what, err, want)
		}
	}
	expect("Stop before Start", d.Stop(t.Context()), "before Start")
	startWithin(t, d, 5*time.Second)
	expect("Start twice", d.Start(t.Context()), "call Stop first")
	expect("Run after Start", d.Run(t.Context()), "call Stop first")
	if !d.Running() {
		t.Error("the misuse stopped the Daemon")
	}
	if err := d.Stop(t.Context()); err != nil {
		t.Fatalf("Stop = %v", err)
	}
	if err := d.Stop(t.Context()); err != nil {
		t.Errorf("Stop twice = %v, want nil", err)
	}
	expect("Start after Stop", d.Start(t.Context()), "after Stop")
	expect("Run after Stop", d.Run(t.Context()), "after Stop")

	r := startDaemon(t, rdb, register(t, nil, "misuse2", worker.HandlerFunc(succeed), worker.QueueOptions{}), cfg)
	testkit.Eventually(t, 5*time.Second, "Run to start", r.Running)
	expect("Start while Run runs", r.Start(t.Context()), "while Run runs")
	expect("Stop while Run runs", r.Daemon.Stop(t.Context()), "end Run's context")
}

// TestDaemonStartDuringOutage: Start returns at once while Redis is down,
// the Daemon waiting in the background; Stop while it waits returns nil
// at once, and a Daemon whose Redis comes back runs jobs until Stop.
func TestDaemonStartDuringOutage(t *testing.T) {
	t.Parallel()
	t.Run("stop while waiting", func(t *testing.T) {
		t.Parallel()
		redis := testkit.StartPrivate(t)
		rdb := redis.Client(t)
		cfg := testConfig(t, testkit.Prefix(t))
		reg := register(t, nil, "q", worker.HandlerFunc(succeed), worker.QueueOptions{})
		redis.Kill()
		d := newDaemon(t, rdb, reg, cfg)
		startWithin(t, d, 3*time.Second)
		if d.Running() || !worker.IsRedisUnavailable(d.Waiting()) {
			t.Errorf("after Start with Redis down: Running %v, Waiting %v; want not running, waiting on Redis", d.Running(), d.Waiting())
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		defer cancel()
		begun := time.Now()
		if err := d.Stop(ctx); err != nil {
			t.Errorf("Stop while waiting = %v, want nil", err)
		}
		if took := time.Since(begun); took > 3*time.Second {
			t.Errorf("Stop while waiting took %s", took)
		}
	})
	t.Run("redis comes back", func(t *testing.T) {
		t.Parallel()
		redis := testkit.StartPrivate(t)
		rdb := redis.Client(t)
		cfg := testConfig(t, testkit.Prefix(t))
		rec := newRecorder()
		reg := register(t, nil, "q", rec.Handler(succeed), worker.QueueOptions{})
		redis.Kill()
		d := newDaemon(t, rdb, reg, cfg)
		startWithin(t, d, 3*time.Second)
		redis.Restart(t)
		testkit.EventuallyState(t, 15*time.Second, func() (bool, string) {
			return d.Running(), fmt.Sprintf("the pool to run (waiting on: %v)", d.Waiting())
		})
		c := newClient(t, rdb, cfg)
		id := enqueue(t, c, worker.JobSpec{Queue: "q"})
		rec.WaitCalls(t, id, 1, 10*time.Second)
		if err := d.Stop(t.Context()); err != nil {
			t.Errorf("Stop = %v", err)
		}
	})
}
