package worker_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// TestPauseAndResume: a Daemon serves a queue with one job running. Pause
// stops its claims at once: none of the jobs enqueued afterwards starts,
// however many are due, and the claim loop does not spin (a handful of
// claims while paused); the running job finishes and is acked. Resume
// starts the waiting jobs at once: the safety poll is an hour
// (testConfig), so only the resume's wake-up can start them. The leader
// samples courier_queue_paused, and Stats reports the flag.
func TestPauseAndResume(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const queue, waiting = "p", 200
		reg := prometheus.NewRegistry()
		cfg := testConfig(t, prefix)
		cfg.Registerer = reg
		c := newClient(t, rdb, cfg)
		ctx := t.Context()

		rec := newRecorder()
		started, release := make(chan struct{}), make(chan struct{})
		h := rec.Handler(func(ctx context.Context, job *worker.Job) error {
			if job.ID == "long" {
				close(started)
				select {
				case <-release:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return nil
		})
		startDaemon(t, rdb, register(t, nil, queue, h, worker.QueueOptions{Concurrency: 4}), cfg)
		enqueue(t, c, worker.JobSpec{Queue: queue, ID: "long"})
		receive(t, started, 10*time.Second, "the first job to start")

		for range 2 { // idempotent
			if err := c.Pause(ctx, queue); err != nil {
				t.Fatalf("Pause: %v", err)
			}
		}
		if !testkit.Exists(t, rdb, rediskeys.QueueKeys(prefix, queue).Paused) {
			t.Errorf("the pause flag is not among QueueKeys: %v", rediskeys.QueueKeys(prefix, queue).All())
		}
		claims := func() float64 {
			return testkit.Metric(t, reg, "courier_redis_script_seconds", "script", "claim")
		}
		before := claims()
		specs := make([]worker.JobSpec, waiting)
		for i := range specs {
			specs[i] = worker.JobSpec{Queue: queue}
		}
		if _, err := c.EnqueueMany(ctx, specs); err != nil {
			t.Fatalf("EnqueueMany: %v", err)
		}
		// The leader's sample (every 5s) sees the pause and the jobs waiting.
		testkit.Eventually(t, 15*time.Second, "courier_queue_paused 1 with the jobs ready", func() bool {
			return testkit.Metric(t, reg, "courier_queue_paused", "queue", queue) == 1 &&
				testkit.Metric(t, reg, "courier_queue_jobs", "queue", queue, "state", "ready") == waiting
		})
		if s := stats(t, c, queue); !s.Paused || s.Ready != waiting || s.Active != 1 {
			t.Errorf("Stats while paused = %+v, want paused, %d ready, 1 active", s, waiting)
		}
		// The running job goes on to its end and is acked.
		close(release)
		testkit.Eventually(t, 10*time.Second, "the running job to be acked", func() bool { return isGone(t, c, queue, "long") })
		if calls := rec.Of("long"); len(calls) != 1 || calls[0].Err != nil {
			t.Errorf("the job running at the pause: %+v, want one attempt that succeeded", calls)
		}
		if n := rec.Count(); n != 1 {
			t.Errorf("%d attempts ran, want only the one that was running at the pause", n)
		}
		// The pause message, the wake-up of the first job enqueued, maybe
		// a resubscription: a claim loop that spun would claim thousands of
		// times in these seconds.
		if n := claims() - before; n > 5 {
			t.Errorf("%v claims while paused, want a handful", n)
		}

		resumed := time.Now()
		for range 2 { // idempotent
			if err := c.Resume(ctx, queue); err != nil {
				t.Fatalf("Resume: %v", err)
			}
		}
		testkit.Eventually(t, 10*time.Second, "every waiting job to run", func() bool { return rec.Count() == waiting+1 })
		first := time.Now()
		for id, calls := range rec.All() {
			if id != "long" && calls[0].Start.Before(first) {
				first = calls[0].Start
			}
		}
		if wait := first.Sub(resumed); wait > 2*time.Second {
			t.Errorf("the first waiting job started %v after the resume, want at once (the wake-up)", wait)
		}
		testkit.Eventually(t, 15*time.Second, "courier_queue_paused 0", func() bool {
			return testkit.Metric(t, reg, "courier_queue_paused", "queue", queue) == 0
		})
		if s := stats(t, c, queue); s.Paused {
			t.Errorf("Stats after the resume = %+v, want not paused", s)
		}
	})
}

// TestPauseRefusesBadQueueNames: Pause and Resume name the queue field of
// a bad name, as the other methods do, and send nothing.
func TestPauseRefusesBadQueueNames(t *testing.T) {
	t.Parallel()
	c := newClient(t, testkit.Single(t), testConfig(t, testkit.Prefix(t)))
	for name, f := range map[string]func(context.Context, string) error{"Pause": c.Pause, "Resume": c.Resume} {
		for _, q := range []string{"", "a{b}", "a:b"} {
			var ve *worker.ValidationError
			if err := f(t.Context(), q); !errors.As(err, &ve) || ve.Field != "Queue" {
				t.Errorf("%s(%q) = %v, want a *ValidationError of Queue", name, q, err)
			}
		}
	}
}
