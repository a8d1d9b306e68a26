package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/redistest"
	"github.com/seed-53d105c9/courier/lua"
	"github.com/seed-53d105c9/courier/worker"
)

// succeed is a handler body that does nothing and succeeds.
func succeed(context.Context, *worker.Job) error { return nil }

// specs returns n jobs for queue with ids "<prefix>-0000", ...
func specs(queue, idPrefix string, n int) []worker.JobSpec {
	out := make([]worker.JobSpec, n)
	for i := range out {
		out[i] = worker.JobSpec{Queue: queue, ID: fmt.Sprintf("%s-%04d", idPrefix, i), Payload: []byte(fmt.Sprint(i))}
	}
	return out
}

func enqueueAll(t *testing.T, c *worker.Client, specs []worker.JobSpec) {
	t.Helper()
	res, err := c.EnqueueMany(t.Context(), specs)
	if err != nil {
		t.Fatalf("EnqueueMany: %v", err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("EnqueueMany job %q: %v", r.ID, r.Err)
		}
	}
}

// checkRanOnce fails unless every job of specs ran exactly once and is gone.
func checkRanOnce(t *testing.T, c *worker.Client, rec *recorder, specs []worker.JobSpec) {
	t.Helper()
	for _, s := range specs {
		if n := len(rec.of(s.ID)); n != 1 {
			t.Errorf("job %s ran %d times, want once", s.ID, n)
		}
		if !isGone(t, c, s.Queue, s.ID) {
			t.Errorf("job %s still exists after it ran", s.ID)
		}
	}
	if n := rec.count(); n != len(specs) {
		t.Errorf("%d attempts ran for %d jobs", n, len(specs))
	}
}

func TestDaemonRunsEveryJobOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, "q", rec.handler(succeed), worker.QueueOptions{Concurrency: 16}), cfg)

		jobs := specs("q", "j", 500)
		enqueueAll(t, c, jobs)
		eventually(t, 20*time.Second, "500 jobs to run and be acked", func() bool {
			return rec.count() >= len(jobs) && stats(t, c, "q") == worker.QueueStats{}
		})
		checkRanOnce(t, c, rec, jobs)
		if qs, err := c.Queues(t.Context()); err != nil || !slices.Contains(qs, "q") {
			t.Errorf("Queues = %v, %v; want the served queue listed", qs, err)
		}
	})
}

func TestDaemonConcurrency(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, _ string) {
		for _, concurrency := range []int{1, 4} {
			t.Run(fmt.Sprint("concurrency ", concurrency), func(t *testing.T) {
				t.Parallel()
				cfg := testConfig(t, redistest.Prefix(t))
				c := newClient(t, rdb, cfg)
				var cur, peak, done atomic.Int64
				release := make(chan struct{})
				h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
					n := cur.Add(1)
					defer cur.Add(-1)
					for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
					}
					select {
					case <-release:
					case <-ctx.Done():
					}
					done.Add(1)
					return nil
				})
				startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{Concurrency: concurrency}), cfg)
				const jobs = 12
				enqueueAll(t, c, specs("q", "c", jobs))

				// Handlers block until released: the pool fills its slots and
				// claims no more than it has.
				want := int64(concurrency)
				eventually(t, 10*time.Second, "every slot to be busy", func() bool {
					s := stats(t, c, "q")
					return cur.Load() == want && s.Active == want && s.Ready == jobs-want
				})
				close(release)
				eventually(t, 10*time.Second, "every job to run", func() bool {
					return done.Load() == jobs && stats(t, c, "q") == worker.QueueStats{}
				})
				if p := peak.Load(); p != want {
					t.Errorf("at most %d handlers ran at once, want %d", p, want)
				}
			})
		}
	})
}

func TestDaemonJSONHandler(t *testing.T) {
	t.Parallel()
	type order struct {
		ID    int      `json:"id"`
		Items []string `json:"items"`
	}
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		got := make(chan order, 1)
		var calls atomic.Int64
		h := worker.JSONHandler(func(_ context.Context, _ *worker.Job, o order) error {
			calls.Add(1)
			got <- o
			return nil
		})
		startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{}), cfg)

		good := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte(`{"id":7,"items":["book","pen"]}`)})
		if o := receive(t, got, 10*time.Second, "the good job"); o.ID != 7 || !slices.Equal(o.Items, []string{"book", "pen"}) {
			t.Errorf("handler got %+v", o)
		}
		eventually(t, 10*time.Second, "the good job to be acked", func() bool { return isGone(t, c, "q", good) })

		bad := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte(`{"id":`)})
		eventually(t, 10*time.Second, "the bad job to die", func() bool { return inState(t, c, "q", bad, worker.StateDead) })
		job := getJob(t, c, "q", bad)
		if job.Attempt != 1 || !strings.Contains(job.LastError, "decode") {
			t.Errorf("bad job: attempt %d last error %q; want 1 and a decode error", job.Attempt, job.LastError)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("the typed handler ran %d times, want once (never for the bad payload)", n)
		}
	})
}

func TestDaemonRetry(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		h := rec.handler(func(_ context.Context, job *worker.Job) error {
			if job.Attempt < 3 {
				return fmt.Errorf("boom %d", job.Attempt)
			}
			return nil
		})
		const step = 50 * time.Millisecond
		startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{Backoff: worker.FixedSteps{step}}), cfg)

		id := enqueue(t, c, worker.JobSpec{Queue: "q"})
		calls := rec.waitCalls(t, id, 3, 10*time.Second)
		eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
		if len(rec.of(id)) != 3 {
			t.Fatalf("the job ran %d times, want 3", len(rec.of(id)))
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
		h := rec.handler(func(_ context.Context, job *worker.Job) error {
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
				eventually(t, 10*time.Second, "the job to die", func() bool { return inState(t, c, "q", id, worker.StateDead) })
				job := getJob(t, c, "q", id)
				if job.Attempt != tt.wantAttempts || job.LastError != tt.wantErr {
					t.Errorf("dead job: attempt %d last error %q; want %d %q", job.Attempt, job.LastError, tt.wantAttempts, tt.wantErr)
				}
				if job.DiedAt.IsZero() {
					t.Error("dead job has no DiedAt")
				}
				calls := rec.of(id)
				if len(calls) != tt.wantAttempts {
					t.Fatalf("handler ran %d times, want %d", len(calls), tt.wantAttempts)
				}
				wantMax := cmpOr(tt.spec.MaxAttempts, opts.MaxAttempts)
				for i, cl := range calls {
					if cl.Attempt != i+1 || cl.MaxAttempts != wantMax {
						t.Errorf("call %d: attempt %d of %d, want %d of %d", i, cl.Attempt, cl.MaxAttempts, i+1, wantMax)
					}
				}
			})
		}
	})
}

func cmpOr(v, def int) int {
	if v != 0 {
		return v
	}
	return def
}

func TestDaemonSnooze(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		const long = 100 * time.Millisecond
		h := rec.handler(func(_ context.Context, job *worker.Job) error {
			prev := len(rec.of(job.ID)) // attempts that ran before this one
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
			calls := rec.waitCalls(t, id, 2, 10*time.Second)
			eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
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
			calls := rec.waitCalls(t, id, 6, 10*time.Second)
			eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
			for i, cl := range calls {
				if cl.Attempt != 1 {
					t.Errorf("run %d: attempt %d, want 1", i+1, cl.Attempt)
				}
			}
			if n := len(rec.of(id)); n != 6 {
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
		h := rec.handler(func(_ context.Context, job *worker.Job) error {
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
		calls := rec.waitCalls(t, id, 2, 10*time.Second)
		if calls[1].Attempt != 2 || !strings.Contains(calls[1].LastError, "handler panic") || !strings.Contains(calls[1].LastError, "kaboom") {
			t.Errorf("retry after the panic: attempt %d last error %q; want 2 and the panic", calls[1].Attempt, calls[1].LastError)
		}
		// The daemon keeps working after the panic.
		after := specs("q", "after", 3)
		enqueueAll(t, c, after)
		eventually(t, 10*time.Second, "every job to run", func() bool { return stats(t, c, "q") == worker.QueueStats{} && rec.count() == 2+len(others)+len(after) })
		for _, s := range append(others, after...) {
			if n := len(rec.of(s.ID)); n != 1 {
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
		h := rec.handler(func(ctx context.Context, job *worker.Job) error {
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
				calls := rec.waitCalls(t, id, 2, 10*time.Second)
				eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, spec.Queue, id) })
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

func TestDaemonDelayedJob(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		cfg.PollInterval = time.Hour // only the head timer and wake-ups can start a job
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		h := rec.handler(succeed)
		reg := register(t, nil, "delayed", h, worker.QueueOptions{})
		register(t, reg, "now", h, worker.QueueOptions{})
		register(t, reg, "head", h, worker.QueueOptions{})
		startDaemon(t, rdb, reg, cfg)

		t.Run("delay", func(t *testing.T) {
			t.Parallel()
			const delay = 300 * time.Millisecond
			before := time.Now()
			id := enqueue(t, c, worker.JobSpec{Queue: "delayed", Delay: delay})
			cl := rec.waitCalls(t, id, 1, 5*time.Second)[0]
			if cl.Start.Before(cl.RunAt) {
				t.Errorf("started at %s, before its run-at %s", cl.Start.Format(time.StampMicro), cl.RunAt.Format(time.StampMicro))
			}
			if earliest := before.Add(delay - 2*time.Millisecond); cl.Start.Before(earliest) {
				t.Errorf("started %s after enqueue, want at least %s", cl.Start.Sub(before), delay)
			}
			if lag := cl.Start.Sub(cl.RunAt); lag > time.Second {
				t.Errorf("started %s after its run-at; the head timer should wake the queue", lag)
			}
		})
		t.Run("earlier than the head", func(t *testing.T) {
			t.Parallel()
			// The queue sleeps until its head, an hour away; a job due
			// sooner must re-arm that sleep.
			enqueue(t, c, worker.JobSpec{Queue: "head", Delay: time.Hour})
			const delay = 300 * time.Millisecond
			before := time.Now()
			id := enqueue(t, c, worker.JobSpec{Queue: "head", Delay: delay})
			cl := rec.waitCalls(t, id, 1, 5*time.Second)[0]
			if cl.Start.Before(cl.RunAt) || cl.Start.Before(before.Add(delay-2*time.Millisecond)) {
				t.Errorf("started %s after enqueue, before its run-at %s", cl.Start.Sub(before), cl.RunAt)
			}
			if lag := cl.Start.Sub(cl.RunAt); lag > time.Second {
				t.Errorf("started %s after its run-at", lag)
			}
		})
		t.Run("idle", func(t *testing.T) {
			t.Parallel()
			warm := enqueue(t, c, worker.JobSpec{Queue: "now"})
			rec.waitCalls(t, warm, 1, 5*time.Second)
			eventually(t, 5*time.Second, "the warm-up job to be acked", func() bool { return isGone(t, c, "now", warm) })

			sent := time.Now()
			id := enqueue(t, c, worker.JobSpec{Queue: "now"})
			cl := rec.waitCalls(t, id, 1, 5*time.Second)[0]
			if lag := cl.Start.Sub(sent); lag > time.Second {
				t.Errorf("a job enqueued to an idle queue started after %s, want under 1s (wake-up message)", lag)
			}
		})
	})
}

func TestDaemonGracefulStop(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		cfg.ShutdownTimeout = 5 * time.Second
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		started := make(chan struct{}, 1)
		h := rec.handler(func(ctx context.Context, _ *worker.Job) error {
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
		if err := d.stop(t, 5*time.Second); err != nil {
			t.Fatalf("Run = %v, want nil", err)
		}
		if calls := rec.of(id); len(calls) != 1 || calls[0].Err != nil {
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
				stubborn := rec.handler(func(ctx context.Context, _ *worker.Job) error {
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
				if err := d.stop(t, 5*time.Second); err != nil {
					t.Fatalf("Run = %v, want nil", err)
				}
				if took := time.Since(begin); took > tt.maxStop {
					t.Errorf("Run took %s to return, want at most %s", took, tt.maxStop)
				}
				if !tt.obeysCtx {
					// The late success must not ack a job handed back.
					close(release)
					rec.waitCalls(t, id, 1, 5*time.Second)
				}
				if calls := rec.of(id); len(calls) != 1 || !errors.Is(calls[0].Cause, worker.ErrShutdown) {
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
				startDaemon(t, rdb, register(t, nil, "q", rec2.handler(succeed), worker.QueueOptions{}), cfg)
				if cl := rec2.waitCalls(t, id, 1, 10*time.Second)[0]; cl.Attempt != 1 {
					t.Errorf("second daemon saw attempt %d, want 1", cl.Attempt)
				}
				eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
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
		h := rec.handler(func(ctx context.Context, _ *worker.Job) error {
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
		eventually(t, 2*time.Second, "the lease to be renewed", func() bool {
			j, err := c.Get(t.Context(), "q", id)
			return err == nil && j.LeaseUntil.After(first.LeaseUntil.Add(cfg.Lease/3))
		})
		calls := rec.waitCalls(t, id, 1, 10*time.Second)
		if calls[0].Err != nil || calls[0].Cause != nil {
			t.Errorf("a job running %s under a %s lease ended with %v (cause %v), want success", runFor, cfg.Lease, calls[0].Err, calls[0].Cause)
		}
		eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
		if n := len(rec.of(id)); n != 1 {
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
		h := rec.handler(func(ctx context.Context, job *worker.Job) error {
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
		claims := worker.QueueKeys(prefix, "q")[4]
		if err := rdb.Do(t.Context(), rdb.B().Hincrby().Key(claims).Field(id).Increment(1).Build()).Error(); err != nil {
			t.Fatalf("HINCRBY: %v", err)
		}
		calls := rec.waitCalls(t, id, 1, 5*time.Second)
		if !errors.Is(calls[0].Cause, worker.ErrLeaseLost) {
			t.Errorf("context cause = %v, want ErrLeaseLost", calls[0].Cause)
		}
		// Nobody renews the lease now, so it expires and the job is
		// recovered; the stale worker's failure changed nothing.
		calls = rec.waitCalls(t, id, 2, 10*time.Second)
		if calls[1].Attempt != 2 || !strings.Contains(calls[1].LastError, "lease expired") {
			t.Errorf("recovered run: attempt %d last error %q; want 2 (the expired attempt counted) and lease expired",
				calls[1].Attempt, calls[1].LastError)
		}
		eventually(t, 10*time.Second, "the job to be acked", func() bool { return isGone(t, c, "q", id) })
	})
}

// TestDaemonHandlerGoexit checks that a handler ending its goroutine with
// runtime.Goexit (as t.FailNow or log-and-exit helpers do in tests) counts as
// a failed attempt, like a panic, and costs the daemon neither the job nor a
// handler slot.
func TestDaemonHandlerGoexit(t *testing.T) {
	t.Parallel()
	rdb := redistest.Single(t)
	cfg := testConfig(t, redistest.Prefix(t))
	c := newClient(t, rdb, cfg)
	rec := newRecorder()
	h := rec.handler(func(_ context.Context, job *worker.Job) error {
		if string(job.Payload) == "goexit" && job.Attempt == 1 {
			runtime.Goexit()
		}
		return nil
	})
	opts := worker.QueueOptions{Concurrency: 1, Backoff: worker.FixedSteps{10 * time.Millisecond}}
	startDaemon(t, rdb, register(t, nil, "q", h, opts), cfg)

	id := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte("goexit")})
	rec.waitCalls(t, id, 1, 10*time.Second)
	next := enqueue(t, c, worker.JobSpec{Queue: "q"})

	// Wait a few leases: long enough for a retry, a recovery or the next job.
	waitUntil(t, 10*cfg.Lease, func() bool { return len(rec.of(id)) >= 2 && len(rec.of(next)) > 0 })
	if len(rec.of(next)) == 0 {
		t.Errorf("the next job did not run within %s: the handler's Goexit cost the queue its only slot (next job %s)",
			10*cfg.Lease, getJob(t, c, "q", next).State)
	}
	calls := rec.of(id)
	if len(calls) < 2 {
		job := getJob(t, c, "q", id)
		t.Fatalf("the job whose handler called Goexit was not retried: after %s it is %s, attempt %d, lease until %s (renewed forever)",
			10*cfg.Lease, job.State, job.Attempt, job.LeaseUntil.Format(time.StampMilli))
	}
	if calls[1].Attempt != 2 || calls[1].LastError == "" {
		t.Errorf("retry after Goexit: attempt %d last error %q; want 2 and an error", calls[1].Attempt, calls[1].LastError)
	}
}

func TestDaemonRecoversCrashedWorker(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		retried := enqueue(t, c, worker.JobSpec{Queue: "q", ID: "retried"})
		lastTry := enqueue(t, c, worker.JobSpec{Queue: "q", ID: "last-try", MaxAttempts: 1})

		// A worker claims both jobs with a 300ms lease and dies.
		keys := worker.QueueKeys(prefix, "q") // jobs, due, active, dead, claims
		vals, err := rueidis.NewLuaScript(lua.Claim).Exec(t.Context(), rdb, keys, []string{"2", "300"}).ToArray()
		if err != nil || len(vals) != 3+2*4 {
			t.Fatalf("claim = %d values, %v; want both jobs", len(vals), err)
		}
		for _, id := range []string{retried, lastTry} {
			if job := getJob(t, c, "q", id); job.State != worker.StateActive || job.Attempt != 1 {
				t.Fatalf("claimed job %s: state %s attempt %d, want active 1", id, job.State, job.Attempt)
			}
		}

		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, "q", rec.handler(succeed), worker.QueueOptions{}), cfg)

		cl := rec.waitCalls(t, retried, 1, 10*time.Second)[0]
		if cl.Attempt != 2 || !strings.Contains(cl.LastError, "lease expired") {
			t.Errorf("recovered job: attempt %d last error %q; want 2 and lease expired", cl.Attempt, cl.LastError)
		}
		eventually(t, 10*time.Second, "the recovered job to be acked", func() bool { return isGone(t, c, "q", retried) })

		eventually(t, 10*time.Second, "the job without attempts left to die", func() bool { return inState(t, c, "q", lastTry, worker.StateDead) })
		job := getJob(t, c, "q", lastTry)
		if job.Attempt != 1 || !strings.Contains(job.LastError, "lease expired") || !strings.Contains(job.LastError, "no attempts left") {
			t.Errorf("dead job: attempt %d last error %q", job.Attempt, job.LastError)
		}
		if n := len(rec.of(lastTry)); n != 0 {
			t.Errorf("the job without attempts left ran %d times, want never", n)
		}
	})
}

func TestDaemonCorruptRecord(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		keys := worker.QueueKeys(prefix, "q")
		jobsKey, dueKey := keys[0], keys[1]
		corrupt := map[string]string{
			"bad":        "garbage",      // not a record at all: the claim script catches it
			"bad-header": "c2;x;garbage", // looks like a record to Lua, does not decode in Go
		}
		for id, raw := range corrupt {
			for _, cmd := range []rueidis.Completed{
				rdb.B().Hset().Key(jobsKey).FieldValue().FieldValue(id, raw).Build(),
				rdb.B().Zadd().Key(dueKey).ScoreMember().ScoreMember(0, id).Build(),
			} {
				if err := rdb.Do(t.Context(), cmd).Error(); err != nil {
					t.Fatalf("%v: %v", cmd.Commands(), err)
				}
			}
		}
		good := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte("good")})

		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, "q", rec.handler(succeed), worker.QueueOptions{}), cfg)
		rec.waitCalls(t, good, 1, 10*time.Second)
		for id, raw := range corrupt {
			eventually(t, 10*time.Second, id+" to be dead", func() bool { return inState(t, c, "q", id, worker.StateDead) })
			job := getJob(t, c, "q", id)
			if !strings.Contains(job.LastError, "decode") || string(job.Payload) != raw {
				t.Errorf("%s: last error %q payload %q; want a decode error and payload %q", id, job.LastError, job.Payload, raw)
			}
			if n := len(rec.of(id)); n != 0 {
				t.Errorf("%s reached the handler %d times", id, n)
			}
		}
		// The daemon keeps working.
		after := enqueue(t, c, worker.JobSpec{Queue: "q"})
		rec.waitCalls(t, after, 1, 10*time.Second)
		eventually(t, 10*time.Second, "the good jobs to be acked", func() bool {
			return stats(t, c, "q") == worker.QueueStats{Dead: int64(len(corrupt))}
		})
	})
}

func TestDaemonTwoDaemonsShareAQueue(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			prefix := redistest.Prefix(t)
			cfg := testConfig(t, prefix)
			c := newClient(t, b.connect(t), cfg)
			rec := newRecorder()
			var mu sync.Mutex
			byDaemon := map[int]int{}
			for n := range 2 {
				h := rec.handler(func(context.Context, *worker.Job) error {
					mu.Lock()
					byDaemon[n]++
					mu.Unlock()
					return nil
				})
				// Each daemon has its own connection, as separate processes would.
				startDaemon(t, b.connect(t), register(t, nil, "q", h, worker.QueueOptions{Concurrency: 8}), cfg)
			}
			jobs := specs("q", "j", 1000)
			enqueueAll(t, c, jobs)
			eventually(t, 20*time.Second, "1,000 jobs to run and be acked", func() bool {
				return rec.count() >= len(jobs) && stats(t, c, "q") == worker.QueueStats{}
			})
			checkRanOnce(t, c, rec, jobs)
			mu.Lock()
			t.Logf("jobs run per daemon: %v", byDaemon)
			mu.Unlock()
		})
	}
}

func TestDaemonStartErrors(t *testing.T) {
	t.Parallel()
	rdb := redistest.Single(t)
	cfg := testConfig(t, redistest.Prefix(t))
	h := worker.HandlerFunc(succeed)

	t.Run("no handlers", func(t *testing.T) {
		t.Parallel()
		for _, reg := range []*worker.Registry{nil, worker.NewRegistry()} {
			if _, err := worker.NewDaemon(rdb, reg, cfg); err == nil {
				t.Errorf("NewDaemon with registry %v succeeded, want an error", reg)
			}
		}
	})
	t.Run("nil client", func(t *testing.T) {
		t.Parallel()
		if _, err := worker.NewDaemon(nil, register(t, nil, "q", h, worker.QueueOptions{}), cfg); err == nil {
			t.Error("NewDaemon with a nil client succeeded")
		}
	})
	t.Run("bad config", func(t *testing.T) {
		t.Parallel()
		bad := cfg
		bad.Lease = time.Millisecond
		_, err := worker.NewDaemon(rdb, register(t, nil, "q", h, worker.QueueOptions{}), bad)
		var ve *worker.ValidationError
		if !errors.As(err, &ve) || ve.Field != "lease" {
			t.Errorf("NewDaemon with a 1ms lease: err = %v, want a validation error of lease", err)
		}
	})
	t.Run("run twice", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		d := startDaemon(t, rdb, register(t, nil, "twice", rec.handler(succeed), worker.QueueOptions{}), cfg)
		eventually(t, 5*time.Second, "Run to start", d.Running)
		errc := make(chan error, 1)
		go func() { errc <- d.Run(t.Context()) }()
		if err := receive(t, errc, 5*time.Second, "the second Run to return"); err == nil {
			t.Error("a second concurrent Run returned nil, want an error")
		}
		// The first Run is unaffected.
		id := enqueue(t, c, worker.JobSpec{Queue: "twice"})
		rec.waitCalls(t, id, 1, 10*time.Second)
		if !d.Running() {
			t.Error("Running reports false while the first Run works")
		}
		if err := d.stop(t, 5*time.Second); err != nil {
			t.Errorf("Run = %v", err)
		}
		if d.Running() {
			t.Error("Running reports true after Run returned")
		}
	})
}
