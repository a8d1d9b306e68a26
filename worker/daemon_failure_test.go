package worker_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

func TestDaemonRetry(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		h := rec.Handler(func(_ context.Context, job *worker.Job) error {
			if job.Attempt < 3 {
				return fmt.Errorf("boom %d", job.Attempt)
			}
			return nil
		})
		const step = 50 * time.Millisecond
		startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{Backoff: worker.FixedSteps{step}}), cfg)

		id := enqueue(t, c, worker.JobSpec{Queue: "q"})
		calls := rec.WaitCalls(t, id, 3, 10*time.Second)
		testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
		if len(rec.Of(id)) != 3 {
			t.Fatalf("the job ran %d times, want 3", len(rec.Of(id)))
		}
		for i, cl := range calls {
			wantErr := ""
			if i > 0 {
				wantErr = fmt.Sprint("boom ", i)
			}
			if cl.Attempt != i+1 || cl.LastError != wantErr || cl.MaxAttempts != worker.MaxAttemptsDefault {
				t.Errorf("call %d: attempt %d of %d, last error %q; want %d of %d, %q",
					i, cl.Attempt, cl.MaxAttempts, cl.LastError, i+1, worker.MaxAttemptsDefault, wantErr)
			}
			if i > 0 {
				if gap := cl.Start.Sub(calls[i-1].End); gap < step-2*time.Millisecond {
					t.Errorf("retry %d started %s after the failure, want at least the %s backoff", i, gap, step)
				}
				if cl.Start.Before(cl.RunAt) {
					t.Errorf("retry %d started at %s, before its run-at %s", i, cl.Start, cl.RunAt)
				}
			}
		}
	})
}

func TestDaemonFailures(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		h := rec.Handler(func(_ context.Context, job *worker.Job) error {
			if string(job.Payload) == "permanent" {
				return worker.Permanent(errors.New("bad input"))
			}
			return fmt.Errorf("fail %d", job.Attempt)
		})
		opts := worker.QueueOptions{MaxAttempts: 3, Backoff: worker.FixedSteps{10 * time.Millisecond}}
		startDaemon(t, rdb, register(t, nil, "q", h, opts), cfg)

		tests := []struct {
			name         string
			spec         worker.JobSpec
			wantAttempts int
			wantErr      string
		}{
			{"queue max attempts", worker.JobSpec{ID: "queue-max"}, 3, "fail 3"},
			{"job max attempts lower", worker.JobSpec{ID: "job-max-2", MaxAttempts: 2}, 2, "fail 2"},
			{"job max attempts higher", worker.JobSpec{ID: "job-max-5", MaxAttempts: 5}, 5, "fail 5"},
			{"permanent", worker.JobSpec{ID: "permanent", Payload: []byte("permanent")}, 1, "permanent: bad input"},
			{"permanent with one attempt", worker.JobSpec{ID: "permanent-1", Payload: []byte("permanent"), MaxAttempts: 1}, 1, "permanent: bad input"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				tt.spec.Queue = "q"
				id := enqueue(t, c, tt.spec)
				testkit.Eventually(t, 10*time.Second, "the job to die", func() bool { return inState(t, c, "q", id, worker.StateDead) })
				job := getJob(t, c, "q", id)
				if job.Attempt != tt.wantAttempts || job.LastError != tt.wantErr {
					t.Errorf("dead job: attempt %d last error %q; want %d %q", job.Attempt, job.LastError, tt.wantAttempts, tt.wantErr)
				}
				if job.DiedAt.IsZero() {
					t.Error("dead job has no DiedAt")
				}
				calls := rec.Of(id)
				if len(calls) != tt.wantAttempts {
					t.Fatalf("handler ran %d times, want %d", len(calls), tt.wantAttempts)
				}
				wantMax := cmp.Or(tt.spec.MaxAttempts, opts.MaxAttempts)
				for i, cl := range calls {
					if cl.Attempt != i+1 || cl.MaxAttempts != wantMax {
						t.Errorf("call %d: attempt %d of %d, want %d of %d", i, cl.Attempt, cl.MaxAttempts, i+1, wantMax)
					}
				}
			})
		}
	})
}

func TestDaemonSnooze(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		const long = 100 * time.Millisecond
		h := rec.Handler(func(_ context.Context, job *worker.Job) error {
			prev := len(rec.Of(job.ID)) // attempts that ran before this one
			switch {
			case string(job.Payload) == "once" && prev == 0:
				return worker.Snooze(long)
			case string(job.Payload) == "five" && prev < 5:
				return worker.Snooze(10 * time.Millisecond)
			}
			return nil
		})
		// Two attempts only: snoozes must not spend them.
		startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{MaxAttempts: 2}), cfg)

		t.Run("once", func(t *testing.T) {
			t.Parallel()
			id := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte("once")})
			calls := rec.WaitCalls(t, id, 2, 10*time.Second)
			testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
			first, second := calls[0], calls[1]
			if first.Attempt != 1 || second.Attempt != 1 {
				t.Errorf("attempts %d then %d, want 1 both times (a snooze does not spend one)", first.Attempt, second.Attempt)
			}
			// The snooze script dates the new run-at from the Redis clock,
			// after the handler returned; allow for millisecond rounding.
			if d := second.RunAt.Sub(first.End); d < long-2*time.Millisecond {
				t.Errorf("snoozed run-at is %s after the handler returned, want at least %s", d, long)
			}
			if d := second.RunAt.Sub(first.RunAt); d < long {
				t.Errorf("snoozed run-at is %s after the first run-at, want at least %s", d, long)
			}
			if second.Start.Before(second.RunAt) {
				t.Errorf("second run started at %s, before its run-at %s", second.Start, second.RunAt)
			}
			if second.LastError != "" {
				t.Errorf("LastError after a snooze = %q, want none", second.LastError)
			}
		})
		t.Run("five times", func(t *testing.T) {
			t.Parallel()
			id := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte("five")})
			calls := rec.WaitCalls(t, id, 6, 10*time.Second)
			testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
			for i, cl := range calls {
				if cl.Attempt != 1 {
					t.Errorf("run %d: attempt %d, want 1", i+1, cl.Attempt)
				}
			}
			if n := len(rec.Of(id)); n != 6 {
				t.Errorf("ran %d times, want 6", n)
			}
		})
	})
}

func TestDaemonPanic(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		logs := &syncBuffer{tee: t.Output()}
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		h := rec.Handler(func(_ context.Context, job *worker.Job) error {
			if string(job.Payload) == "panic" && job.Attempt == 1 {
				panic("kaboom")
			}
			return nil
		})
		opts := worker.QueueOptions{Concurrency: 2, Backoff: worker.FixedSteps{10 * time.Millisecond}}
		startDaemon(t, rdb, register(t, nil, "q", h, opts), cfg)

		id := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte("panic")})
		others := specs("q", "other", 5)
		enqueueAll(t, c, others)
		calls := rec.WaitCalls(t, id, 2, 10*time.Second)
		if calls[1].Attempt != 2 || !strings.Contains(calls[1].LastError, "handler panic") || !strings.Contains(calls[1].LastError, "kaboom") {
			t.Errorf("retry after the panic: attempt %d last error %q; want 2 and the panic", calls[1].Attempt, calls[1].LastError)
		}
		// The daemon keeps working after the panic.
		after := specs("q", "after", 3)
		enqueueAll(t, c, after)
		testkit.Eventually(t, 10*time.Second, "every job to run", func() bool { return stats(t, c, "q") == admin.QueueStats{} && rec.Count() == 2+len(others)+len(after) })
		for _, s := range append(others, after...) {
			if n := len(rec.Of(s.ID)); n != 1 {
				t.Errorf("job %s ran %d times, want once", s.ID, n)
			}
		}
		if out := logs.String(); !strings.Contains(out, "goroutine") || !strings.Contains(out, "kaboom") {
			t.Errorf("the log does not show the panic and its stack:\n%s", out)
		}
	})
}

func TestDaemonJobTimeout(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		h := rec.Handler(func(ctx context.Context, job *worker.Job) error {
			if job.Attempt == 1 {
				<-ctx.Done()
				return ctx.Err()
			}
			return nil
		})
		const timeout = 100 * time.Millisecond
		backoff := worker.FixedSteps{10 * time.Millisecond}
		reg := register(t, nil, "job-timeout", h, worker.QueueOptions{Backoff: backoff})
		register(t, reg, "queue-timeout", h, worker.QueueOptions{Backoff: backoff, Timeout: timeout})
		startDaemon(t, rdb, reg, cfg)

		for _, spec := range []worker.JobSpec{
			{Queue: "job-timeout", ID: "job", Timeout: timeout},
			{Queue: "queue-timeout", ID: "queue"},
		} {
			t.Run(spec.Queue, func(t *testing.T) {
				t.Parallel()
				id := enqueue(t, c, spec)
				calls := rec.WaitCalls(t, id, 2, 10*time.Second)
				testkit.Eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, spec.Queue, id) })
				first, second := calls[0], calls[1]
				if !errors.Is(first.Cause, worker.ErrJobTimeout) {
					t.Errorf("context cause = %v, want ErrJobTimeout", first.Cause)
				}
				if first.Timeout != timeout {
					t.Errorf("handler saw Timeout %s, want %s", first.Timeout, timeout)
				}
				if d := first.End.Sub(first.Start); d < timeout-2*time.Millisecond {
					t.Errorf("context ended after %s, want about %s", d, timeout)
				}
				if second.Attempt != 2 || !strings.Contains(second.LastError, "timed out") {
					t.Errorf("retry: attempt %d last error %q; want 2 and a timeout", second.Attempt, second.LastError)
				}
			})
		}
	})
}

// TestDaemonHandlerGoexit checks that a handler ending its goroutine with
// runtime.Goexit (as t.FailNow or log-and-exit helpers do in tests) counts as
// a failed attempt, like a panic, and costs the daemon neither the job nor a
// handler slot.
func TestDaemonHandlerGoexit(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	cfg := testConfig(t, testkit.Prefix(t))
	c := newClient(t, rdb, cfg)
	rec := newRecorder()
	h := rec.Handler(func(_ context.Context, job *worker.Job) error {
		if string(job.Payload) == "goexit" && job.Attempt == 1 {
			runtime.Goexit()
		}
		return nil
	})
	opts := worker.QueueOptions{Concurrency: 1, Backoff: worker.FixedSteps{10 * time.Millisecond}}
	startDaemon(t, rdb, register(t, nil, "q", h, opts), cfg)

	id := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte("goexit")})
	rec.WaitCalls(t, id, 1, 10*time.Second)
	next := enqueue(t, c, worker.JobSpec{Queue: "q"})

	// Wait a few leases: long enough for a retry, a recovery or the next job.
	testkit.WaitUntil(t, 10*cfg.Lease, func() bool { return len(rec.Of(id)) >= 2 && len(rec.Of(next)) > 0 })
	if len(rec.Of(next)) == 0 {
		t.Errorf("the next job did not run within %s: the handler's Goexit cost the queue its only slot (next job %s)",
			10*cfg.Lease, getJob(t, c, "q", next).State)
	}
	calls := rec.Of(id)
	if len(calls) < 2 {
		job := getJob(t, c, "q", id)
		t.Fatalf("the job whose handler called Goexit was not retried: after %s it is %s, attempt %d, lease until %s (renewed forever)",
			10*cfg.Lease, job.State, job.Attempt, job.LeaseUntil.Format(time.StampMilli))
	}
	if calls[1].Attempt != 2 || calls[1].LastError == "" {
		t.Errorf("retry after Goexit: attempt %d last error %q; want 2 and an error", calls[1].Attempt, calls[1].LastError)
	}
}
