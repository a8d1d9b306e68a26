package pool_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

func TestRunsEveryJobOnceWithinConcurrency(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		concurrency, jobs int
	}{
		{concurrency: 8, jobs: 100},
		{concurrency: 1, jobs: 10},
		{concurrency: 16, jobs: 5},
		{concurrency: 3, jobs: 3},
	} {
		t.Run(fmt.Sprintf("concurrency=%d/jobs=%d", tc.concurrency, tc.jobs), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := storetest.NewFake(t)
				now := time.Now()
				for i := range tc.jobs {
					st.Add("q", jobID(i), now)
				}
				log := newExecLog()
				exec := log.wrap(func(_ context.Context, rec *store.Record) pool.Outcome {
					// Unequal run times, so slots free up one by one.
					var i int
					fmt.Sscanf(rec.ID, "job-%d", &i)
					time.Sleep(time.Duration(i%7+1) * 10 * time.Millisecond)
					return pool.Outcome{Kind: pool.Ack}
				})
				r := startPool(t, st, pool.Config{}, pool.Queue{Name: "q", Concurrency: tc.concurrency, MaxAttempts: 3, Exec: exec})

				time.Sleep(time.Minute)
				synctest.Wait()
				sum, err := r.stop(t)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if sum != (pool.Summary{}) {
					t.Errorf("Summary = %+v, want zero: nothing was running at the stop", sum)
				}
				for i := range tc.jobs {
					if runs := log.get(jobID(i)); len(runs) != 1 {
						t.Errorf("%s ran %d times, want 1", jobID(i), len(runs))
					}
				}
				jobs, runs, maxRunning := log.count()
				if jobs != tc.jobs || runs != tc.jobs {
					t.Errorf("%d jobs ran %d times, want %d once each", jobs, runs, tc.jobs)
				}
				if want := min(tc.concurrency, tc.jobs); maxRunning != want {
					t.Errorf("at most %d jobs ran at once, want exactly %d (the concurrency)", maxRunning, want)
				}
				acked := 0
				for _, c := range st.Calls("Ack") {
					acked += c.Got
				}
				if acked != tc.jobs {
					t.Errorf("Ack deleted %d jobs, want %d", acked, tc.jobs)
				}
				if left := st.Len("q", store.SetDue) + st.Len("q", store.SetActive) + st.Len("q", store.SetDead); left != 0 {
					t.Errorf("%d jobs left in the store, want 0", left)
				}
				for _, c := range st.Calls("Claim") {
					if c.N > tc.concurrency {
						t.Errorf("Claim at %v asked for %d jobs, more than the concurrency %d", c.At.Sub(now), c.N, tc.concurrency)
					}
				}
				assertNoCalls(t, st, "Retry", "Kill", "Snooze")
			})
		})
	}
}

func TestIdlePoolCallsRarely(t *testing.T) {
	t.Parallel()
	for _, poll := range []time.Duration{0, time.Second, 20 * time.Second} {
		t.Run(fmt.Sprintf("poll=%v", poll), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				const window = time.Minute
				every := poll
				if every == 0 {
					every = worker.PollIntervalDefault
				}
				st := storetest.NewFake(t)
				r := startPool(t, st, pool.Config{PollInterval: poll},
					pool.Queue{Name: "a", Concurrency: 4, MaxAttempts: 3, Exec: ack},
					pool.Queue{Name: "b", Concurrency: 1, MaxAttempts: 5, Exec: ack})
				time.Sleep(window)
				synctest.Wait()
				for _, q := range []string{"a", "b"} {
					// One claim at start, one when the wake-up subscription is
					// up (messages sent before it are lost), one per poll.
					if n, want := st.Count("Claim", q), int(window/every)+2; n != want {
						t.Errorf("queue %s: %d claims in %v, want %d", q, n, window, want)
					}
				}
				if n := st.Count("Subscribe", ""); n != 1 {
					t.Errorf("%d subscriptions, want 1", n)
				}
				// Lease recovery is the queue leader's duty (package carrier).
				assertNoCalls(t, st, "Extend", "Ack", "Retry", "Kill", "Snooze", "Recover")
				if _, err := r.stop(t); err != nil {
					t.Fatalf("Run: %v", err)
				}
			})
		})
	}
}

func TestDelayedJobsStartAtRunAt(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{0, 10 * time.Second, -10 * time.Second, 3 * time.Hour} {
		t.Run(fmt.Sprintf("redis clock %+v", skew), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := storetest.NewFake(t)
				st.SetSkew(skew)
				t0 := time.Now()
				r0 := t0.Add(skew) // the Redis clock at the start
				runAt := map[string]time.Duration{
					"a": 2 * time.Second,
					"b": 2500 * time.Millisecond,
					"c": 10 * time.Second,
					"d": 10 * time.Second, // same instant as c
				}
				for id, at := range runAt {
					st.Add("q", id, r0.Add(at))
				}
				log := newExecLog()
				// A safety poll of an hour proves the head timer does the work.
				r := startPool(t, st, pool.Config{PollInterval: time.Hour},
					pool.Queue{Name: "q", Concurrency: 4, MaxAttempts: 3, Exec: log.wrap(ack)})
				time.Sleep(time.Minute)
				synctest.Wait()
				if _, err := r.stop(t); err != nil {
					t.Fatalf("Run: %v", err)
				}
				for _, id := range sortedKeys(runAt) {
					runs := log.get(id)
					if len(runs) != 1 {
						t.Errorf("job %s ran %d times, want 1", id, len(runs))
						continue
					}
					if lag := runs[0].At.Sub(t0) - runAt[id]; lag < 0 || lag >= time.Millisecond {
						t.Errorf("job %s due at +%v started at +%v (lag %v), want at its run-at", id,
							runAt[id], runs[0].At.Sub(t0), lag)
					}
					if !runs[0].Rec.RunAt.Equal(r0.Add(runAt[id])) {
						t.Errorf("job %s: Record.RunAt = %v, want %v", id, runs[0].Rec.RunAt, r0.Add(runAt[id]))
					}
				}
				// Claims only when something can be due: at the start and at run-ats.
				for _, c := range st.Calls("Claim") {
					switch c.At.Sub(t0) {
					case 0, 2 * time.Second, 2500 * time.Millisecond, 10 * time.Second:
					default:
						t.Errorf("claim at +%v: no job was due then", c.At.Sub(t0))
					}
				}
			})
		})
	}
}

func TestRunWithCancelledContextReturnsAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("q", "j", t0)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		p, err := pool.New(st, []pool.Queue{{Name: "q", Concurrency: 2, MaxAttempts: 3, Exec: ack}}, withDefaults(pool.Config{}))
		if err != nil {
			t.Fatal(err)
		}
		sum, err := p.Run(ctx)
		if err != nil || sum != (pool.Summary{}) {
			t.Errorf("Run = %+v, %v; want zero summary, nil", sum, err)
		}
		if d := time.Since(t0); d != 0 {
			t.Errorf("Run took %v, want no time", d)
		}
		assertNoCalls(t, st, "Claim", "Ack", "Extend")
		if j, _ := st.Job("q", "j"); j.State != store.SetDue || j.Rec.Claim != 0 {
			t.Errorf("job %+v, want untouched in due", j)
		}
	})
}

func TestRunWithoutQueuesFails(t *testing.T) {
	t.Parallel()
	p, err := pool.New(storetest.NewFake(t), nil, withDefaults(pool.Config{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Run(t.Context()); err == nil {
		t.Errorf("Run with no queues returned nil, want an error")
	}
}

func TestNewRefusesBadQueues(t *testing.T) {
	t.Parallel()
	good := pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 1, Exec: ack}
	tests := map[string]func(q *pool.Queue){
		"empty name":     func(q *pool.Queue) { q.Name = "" },
		"no exec":        func(q *pool.Queue) { q.Exec = nil },
		"no concurrency": func(q *pool.Queue) { q.Concurrency = 0 },
		"no attempts":    func(q *pool.Queue) { q.MaxAttempts = 0 },
	}
	for name, mutate := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			q := good
			mutate(&q)
			if _, err := pool.New(storetest.NewFake(t), []pool.Queue{q}, withDefaults(pool.Config{})); err == nil {
				t.Errorf("New accepted %+v", q)
			}
		})
	}
	if _, err := pool.New(storetest.NewFake(t), []pool.Queue{good, good}, withDefaults(pool.Config{})); err == nil {
		t.Errorf("New accepted a repeated queue name")
	}
}
