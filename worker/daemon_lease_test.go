package worker_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

func TestDaemonGracefulStop(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		cfg.ShutdownTimeout = 5 * time.Second
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		started := make(chan struct{}, 1)
		h := rec.Handler(func(ctx context.Context, _ *worker.Job) error {
			started <- struct{}{}
			timer := time.NewTimer(200 * time.Millisecond)
			defer timer.Stop()
			select {
			case <-timer.C:
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
		d := startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{}), cfg)
		id := enqueue(t, c, worker.JobSpec{Queue: "q"})
		receive(t, started, 10*time.Second, "the job to start")

		if _, ok := d.Drained(); ok {
			t.Error("Drained reports a summary while Run works")
		}
		if err := d.Stop(t, 5*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if calls := rec.Of(id); len(calls) != 1 || calls[0].Err != nil {
			t.Fatalf("handler calls %+v, want one that completed", calls)
		}
		if !isGone(t, c, "q", id) {
			t.Errorf("job still exists after a graceful stop: %+v", getJob(t, c, "q", id))
		}
		if s, ok := d.Drained(); !ok || s != (worker.DrainSummary{Finished: 1}) {
			t.Errorf("Drained = %+v, %v; want Finished 1, Returned 0", s, ok)
		}
		if d.Running() {
			t.Error("Running reports true after Run returned")
		}
	})
}

func TestDaemonHardStop(t *testing.T) {
	t.Parallel()
	const shutdownTimeout = 200 * time.Millisecond
	tests := []struct {
		name string
		// obeysCtx: the handler returns when its context ends; otherwise it
		// returns only when the test lets it, after Run returned.
		obeysCtx bool
		// maxStop bounds Run's return after its context ends: the shutdown
		// timeout, plus the pool's 1s grace for handlers that do not return.
		maxStop time.Duration
	}{
		{"handler returns when cancelled", true, 1500 * time.Millisecond},
		{"handler ignores cancellation", false, 2500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
				cfg := testConfig(t, prefix)
				cfg.ShutdownTimeout = shutdownTimeout
				c := newClient(t, rdb, cfg)
				rec := newRecorder()
				started := make(chan struct{}, 1)
				release := make(chan struct{})
				stubborn := rec.Handler(func(ctx context.Context, _ *worker.Job) error {
					started <- struct{}{}
					if tt.obeysCtx {
						<-ctx.Done()
						return ctx.Err()
					}
					<-release
					return nil
				})
				d := startDaemon(t, rdb, register(t, nil, "q", stubborn, worker.QueueOptions{}), cfg)
				id := enqueue(t, c, worker.JobSpec{Queue: "q"})
				receive(t, started, 10*time.Second, "the job to start")

				begin := time.Now()
				if err := d.Stop(t, 5*time.Second); err != nil {
					t.Fatalf("Run = %v, want nil", err)
				}
				if took := time.Since(begin); took > tt.maxStop {
					t.Errorf("Run took %s to return, want at most %s", took, tt.maxStop)
				}
				if !tt.obeysCtx {
					// The late success must not ack a job handed back.
					close(release)
					rec.WaitCalls(t, id, 1, 5*time.Second)
				}
				if calls := rec.Of(id); len(calls) != 1 || !errors.Is(calls[0].Cause, worker.ErrShutdown) {
					t.Fatalf("handler calls %+v, want one whose context ended with ErrShutdown", calls)
				}
				job := getJob(t, c, "q", id)
				if job.State != worker.StateReady || job.Attempt != 0 || job.LastError != "" {
					t.Errorf("handed-back job: state %s attempt %d last error %q; want ready, 0, none", job.State, job.Attempt, job.LastError)
				}
				if s, ok := d.Drained(); !ok || s != (worker.DrainSummary{Returned: 1}) {
					t.Errorf("Drained = %+v, %v; want Finished 0, Returned 1", s, ok)
				}

				// Another daemon runs the job with its first attempt.
				rec2 := newRecorder()
				startDaemon(t, rdb, register(t, nil, "q", rec2.Handler(succeed), worker.QueueOptions{}), cfg)
				if cl := rec2.WaitCalls(t, id, 1, 10*time.Second)[0]; cl.Attempt != 1 {
					t.Errorf("second daemon saw attempt %d, want 1", cl.Attempt)
				}
				testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
			})
		})
	}
}

func TestDaemonExtendsLeases(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix) // lease 300ms, renewed every 100ms
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		started := make(chan struct{}, 1)
		const runFor = time.Second
		h := rec.Handler(func(ctx context.Context, _ *worker.Job) error {
			started <- struct{}{}
			timer := time.NewTimer(runFor)
			defer timer.Stop()
			select {
			case <-timer.C:
				return nil
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		})
		startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{}), cfg)
		id := enqueue(t, c, worker.JobSpec{Queue: "q"})
		receive(t, started, 10*time.Second, "the job to start")

		first := getJob(t, c, "q", id)
		if first.State != worker.StateActive || first.LeaseUntil.IsZero() {
			t.Fatalf("running job: state %s lease until %s", first.State, first.LeaseUntil)
		}
		testkit.Eventually(t, 2*time.Second, "the lease to be renewed", func() bool {
			j, err := c.Get(t.Context(), "q", id)
			return err == nil && j.LeaseUntil.After(first.LeaseUntil.Add(cfg.Lease/3))
		})
		calls := rec.WaitCalls(t, id, 1, 10*time.Second)
		if calls[0].Err != nil || calls[0].Cause != nil {
			t.Errorf("a job running %s under a %s lease ended with %v (cause %v), want success", runFor, cfg.Lease, calls[0].Err, calls[0].Cause)
		}
		testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
		if n := len(rec.Of(id)); n != 1 {
			t.Errorf("the job ran %d times, want once", n)
		}
	})
}

func TestDaemonLeaseLost(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		started := make(chan struct{}, 1)
		h := rec.Handler(func(ctx context.Context, job *worker.Job) error {
			if job.Attempt > 1 {
				return nil
			}
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		})
		startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{}), cfg)
		id := enqueue(t, c, worker.JobSpec{Queue: "q"})
		receive(t, started, 10*time.Second, "the job to start")

		// Another worker claims the job behind this one's back: its claim
		// token moves on, so the next renewal finds the lease lost.
		claims := rediskeys.QueueKeys(prefix, "q").Claims
		held, _ := testkit.HGet(t, rdb, claims, id) // "<token>@<process>"
		tok, _, _ := strings.Cut(held, "@")
		n, err := strconv.ParseInt(tok, 10, 64)
		if err != nil {
			t.Fatalf("claims value %q: %v", held, err)
		}
		testkit.Do(t, rdb, rdb.B().Hset().Key(claims).FieldValue().FieldValue(id, strconv.FormatInt(n+1, 10)+"@another-process").Build())
		calls := rec.WaitCalls(t, id, 1, 5*time.Second)
		if !errors.Is(calls[0].Cause, worker.ErrLeaseLost) {
			t.Errorf("context cause = %v, want ErrLeaseLost", calls[0].Cause)
		}
		// Nobody renews the lease now, so it expires and the job is
		// recovered; the stale worker's failure changed nothing.
		calls = rec.WaitCalls(t, id, 2, 10*time.Second)
		if calls[1].Attempt != 2 || !strings.Contains(calls[1].LastError, "lease expired") {
			t.Errorf("recovered run: attempt %d last error %q; want 2 (the expired attempt counted) and lease expired",
				calls[1].Attempt, calls[1].LastError)
		}
		testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
	})
}

func TestDaemonRecoversCrashedWorker(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		retried := enqueue(t, c, worker.JobSpec{Queue: "q", ID: "retried"})
		lastTry := enqueue(t, c, worker.JobSpec{Queue: "q", ID: "last-try", MaxAttempts: 1})

		// A worker claims both jobs with a 300ms lease and dies.
		// jobs, due, active, dead, claims, state, rate, paused, due:high,
		// due:low, opts, unique, unique:exp, history, history:minutes:
		// claim.lua's keys
		k := store.QueueKeys(prefix, "q")
		keys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Paused, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex}
		vals, err := script.Claim.Exec(t.Context(), script.NewConn(rdb, nil), keys, []string{"2", "300"}).ToArray()
		if err != nil || len(vals) != 4+2*5 {
			t.Fatalf("claim = %d values, %v; want both jobs", len(vals), err)
		}
		for _, id := range []string{retried, lastTry} {
			if job := getJob(t, c, "q", id); job.State != worker.StateActive || job.Attempt != 1 {
				t.Fatalf("claimed job %s: state %s attempt %d, want active 1", id, job.State, job.Attempt)
			}
		}

		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, "q", rec.Handler(succeed), worker.QueueOptions{}), cfg)

		cl := rec.WaitCalls(t, retried, 1, 10*time.Second)[0]
		if cl.Attempt != 2 || !strings.Contains(cl.LastError, "lease expired") {
			t.Errorf("recovered job: attempt %d last error %q; want 2 and lease expired", cl.Attempt, cl.LastError)
		}
		testkit.Eventually(t, 10*time.Second, "the recovered job to be acked", func() bool { return isGone(t, c, "q", retried) })

		testkit.Eventually(t, 10*time.Second, "the job without attempts left to die", func() bool { return inState(t, c, "q", lastTry, worker.StateDead) })
		job := getJob(t, c, "q", lastTry)
		if job.Attempt != 1 || !strings.Contains(job.LastError, "lease expired") || !strings.Contains(job.LastError, "no attempts left") {
			t.Errorf("dead job: attempt %d last error %q", job.Attempt, job.LastError)
		}
		if n := len(rec.Of(lastTry)); n != 0 {
			t.Errorf("the job without attempts left ran %d times, want never", n)
		}
	})
}
