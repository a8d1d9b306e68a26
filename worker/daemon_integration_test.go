package worker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// specs returns n jobs for queue with ids "<prefix>-0000", ...
func specs(queue, idPrefix string, n int) []worker.JobSpec {
	out := make([]worker.JobSpec, n)
	for i := range out {
		out[i] = worker.JobSpec{Queue: queue, ID: fmt.Sprintf("%s-%04d", idPrefix, i), Payload: []byte(fmt.Sprint(i))}
	}
	return out
}

func enqueueAll(t *testing.T, c *client, specs []worker.JobSpec) {
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
func checkRanOnce(t *testing.T, c *client, rec *recorder, specs []worker.JobSpec) {
	t.Helper()
	for _, s := range specs {
		if n := len(rec.Of(s.ID)); n != 1 {
			t.Errorf("job %s ran %d times, want once", s.ID, n)
		}
		if !isGone(t, c, s.Queue, s.ID) {
			t.Errorf("job %s still exists after it ran", s.ID)
		}
	}
	if n := rec.Count(); n != len(specs) {
		t.Errorf("%d attempts ran for %d jobs", n, len(specs))
	}
}

func TestDaemonRunsEveryJobOnce(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, "q", rec.Handler(succeed), worker.QueueOptions{Concurrency: 16}), cfg)

		jobs := specs("q", "j", 500)
		enqueueAll(t, c, jobs)
		testkit.Eventually(t, 20*time.Second, "500 jobs to run and be acked", func() bool {
			return rec.Count() >= len(jobs) && stats(t, c, "q") == admin.QueueStats{}
		})
		checkRanOnce(t, c, rec, jobs)
		if qs, err := c.AllQueues(t.Context()); err != nil || !slices.Contains(qs, "q") {
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
				cfg := testConfig(t, testkit.Prefix(t))
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
				testkit.Eventually(t, 10*time.Second, "every slot to be busy", func() bool {
					s := stats(t, c, "q")
					return cur.Load() == want && s.Active == want && s.Ready == jobs-want
				})
				close(release)
				testkit.Eventually(t, 10*time.Second, "every job to run", func() bool {
					return done.Load() == jobs && stats(t, c, "q") == admin.QueueStats{}
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
		testkit.Eventually(t, 10*time.Second, "the good job to be acked", func() bool { return isGone(t, c, "q", good) })

		bad := enqueue(t, c, worker.JobSpec{Queue: "q", Payload: []byte(`{"id":`)})
		testkit.Eventually(t, 10*time.Second, "the bad job to die", func() bool { return inState(t, c, "q", bad, worker.StateDead) })
		job := getJob(t, c, "q", bad)
		if job.Attempt != 1 || !strings.Contains(job.LastError, "decode") {
			t.Errorf("bad job: attempt %d last error %q; want 1 and a decode error", job.Attempt, job.LastError)
		}
		if n := calls.Load(); n != 1 {
			t.Errorf("the typed handler ran %d times, want once (never for the bad payload)", n)
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
		h := rec.Handler(succeed)
		reg := register(t, nil, "delayed", h, worker.QueueOptions{})
		register(t, reg, "now", h, worker.QueueOptions{})
		register(t, reg, "head", h, worker.QueueOptions{})
		startDaemon(t, rdb, reg, cfg)

		t.Run("delay", func(t *testing.T) {
			t.Parallel()
			const delay = 300 * time.Millisecond
			before := time.Now()
			id := enqueue(t, c, worker.JobSpec{Queue: "delayed", Delay: delay})
			cl := rec.WaitCalls(t, id, 1, 5*time.Second)[0]
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
			cl := rec.WaitCalls(t, id, 1, 5*time.Second)[0]
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
			rec.WaitCalls(t, warm, 1, 5*time.Second)
			testkit.Eventually(t, 5*time.Second, "the warm-up job to be acked", func() bool { return isGone(t, c, "now", warm) })

			sent := time.Now()
			id := enqueue(t, c, worker.JobSpec{Queue: "now"})
			cl := rec.WaitCalls(t, id, 1, 5*time.Second)[0]
			if lag := cl.Start.Sub(sent); lag > time.Second {
				t.Errorf("a job enqueued to an idle queue started after %s, want under 1s (wake-up message)", lag)
			}
		})
	})
}

func TestDaemonCorruptRecord(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		keys := rediskeys.QueueKeys(prefix, "q").All()
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
		startDaemon(t, rdb, register(t, nil, "q", rec.Handler(succeed), worker.QueueOptions{}), cfg)
		rec.WaitCalls(t, good, 1, 10*time.Second)
		for id, raw := range corrupt {
			testkit.Eventually(t, 10*time.Second, id+" to be dead", func() bool { return inState(t, c, "q", id, worker.StateDead) })
			job := getJob(t, c, "q", id)
			if !strings.Contains(job.LastError, "decode") || string(job.Payload) != raw {
				t.Errorf("%s: last error %q payload %q; want a decode error and payload %q", id, job.LastError, job.Payload, raw)
			}
			if n := len(rec.Of(id)); n != 0 {
				t.Errorf("%s reached the handler %d times", id, n)
			}
		}
		// The daemon keeps working.
		after := enqueue(t, c, worker.JobSpec{Queue: "q"})
		rec.WaitCalls(t, after, 1, 10*time.Second)
		testkit.Eventually(t, 10*time.Second, "the good jobs to be acked", func() bool {
			return stats(t, c, "q") == admin.QueueStats{Dead: int64(len(corrupt))}
		})
	})
}

func TestDaemonTwoDaemonsShareAQueue(t *testing.T) {
	t.Parallel()
	for _, b := range backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			prefix := testkit.Prefix(t)
			cfg := testConfig(t, prefix)
			c := newClient(t, b.Connect(t), cfg)
			rec := newRecorder()
			var mu sync.Mutex
			byDaemon := map[int]int{}
			for n := range 2 {
				h := rec.Handler(func(context.Context, *worker.Job) error {
					mu.Lock()
					byDaemon[n]++
					mu.Unlock()
					return nil
				})
				// Each daemon has its own connection, as separate processes would.
				startDaemon(t, b.Connect(t), register(t, nil, "q", h, worker.QueueOptions{Concurrency: 8}), cfg)
			}
			jobs := specs("q", "j", 1000)
			enqueueAll(t, c, jobs)
			testkit.Eventually(t, 20*time.Second, "1,000 jobs to run and be acked", func() bool {
				return rec.Count() >= len(jobs) && stats(t, c, "q") == admin.QueueStats{}
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
	rdb := testkit.Single(t)
	cfg := testConfig(t, testkit.Prefix(t))
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
		if !errors.As(err, &ve) || ve.Field != "Lease" {
			t.Errorf("NewDaemon with a 1ms lease: err = %v, want a validation error of lease", err)
		}
	})
	t.Run("run twice", func(t *testing.T) {
		t.Parallel()
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		d := startDaemon(t, rdb, register(t, nil, "twice", rec.Handler(succeed), worker.QueueOptions{}), cfg)
		testkit.Eventually(t, 5*time.Second, "Run to start", d.Running)
		errc := make(chan error, 1)
		go func() { errc <- d.Run(t.Context()) }()
		if err := receive(t, errc, 5*time.Second, "the second Run to return"); err == nil {
			t.Error("a second concurrent Run returned nil, want an error")
		}
		// The first Run is unaffected.
		id := enqueue(t, c, worker.JobSpec{Queue: "twice"})
		rec.WaitCalls(t, id, 1, 10*time.Second)
		if !d.Running() {
			t.Error("Running reports false while the first Run works")
		}
		if err := d.Stop(t, 5*time.Second); err != nil {
			t.Errorf("Run = %v", err)
		}
		if d.Running() {
			t.Error("Running reports true after Run returned")
		}
	})
}
