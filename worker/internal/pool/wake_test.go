package pool_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

func TestWakeUpStartsJob(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		skew   time.Duration // Redis clock minus the local clock
		head   time.Duration // run-at of a job already waiting; 0 = none
		enqAt  time.Duration // when the new job is enqueued
		due    time.Duration // its run-at
		wantAt time.Duration // when it must start
	}{
		{name: "due now, empty queue", enqAt: 5 * time.Second, due: 5 * time.Second, wantAt: 5 * time.Second},
		{name: "due now, head later", head: time.Minute, enqAt: 5 * time.Second, due: 5 * time.Second, wantAt: 5 * time.Second},
		{name: "overdue", enqAt: 5 * time.Second, due: time.Second, wantAt: 5 * time.Second},
		{name: "due before the head", head: time.Minute, enqAt: 5 * time.Second, due: 8 * time.Second, wantAt: 8 * time.Second},
		{name: "due after the head, no message", head: time.Minute, enqAt: 5 * time.Second, due: 90 * time.Second, wantAt: 90 * time.Second},
		{name: "due now, redis clock ahead", skew: time.Hour, enqAt: 5 * time.Second, due: 5 * time.Second, wantAt: 5 * time.Second},
		{name: "due before the head, redis clock ahead", skew: time.Hour, head: time.Minute, enqAt: 5 * time.Second, due: 8 * time.Second, wantAt: 8 * time.Second},
		{name: "due before the head, redis clock behind", skew: -time.Hour, head: time.Minute, enqAt: 5 * time.Second, due: 8 * time.Second, wantAt: 8 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := storetest.NewFake(t)
				st.SetSkew(tc.skew)
				t0 := time.Now()
				r0 := t0.Add(tc.skew) // the Redis clock at the start
				if tc.head > 0 {
					st.Add("q", "head", r0.Add(tc.head))
				}
				log := newExecLog()
				r := startPool(t, st, pool.Config{PollInterval: time.Hour},
					pool.Queue{Name: "q", Concurrency: 2, MaxAttempts: 3, Exec: log.wrap(ack)})
				time.Sleep(tc.enqAt)
				st.Add("q", "new", r0.Add(tc.due))
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				if _, err := r.stop(t); err != nil {
					t.Fatalf("Run: %v", err)
				}
				runs := log.get("new")
				if len(runs) != 1 {
					t.Fatalf("new job ran %d times, want 1", len(runs))
				}
				if got := runs[0].At.Sub(t0); got != tc.wantAt {
					t.Errorf("new job started at +%v, want +%v", got, tc.wantAt)
				}
				if tc.head > 0 {
					if runs := log.get("head"); len(runs) != 1 || runs[0].At.Sub(t0) != tc.head {
						t.Errorf("head job runs %+v, want one at +%v", runs, tc.head)
					}
				}
			})
		})
	}
}

// TestSubscriptionBackoffResets: the wait before resubscribing grows with
// consecutive failures only. A subscription that worked for an hour and then
// broke is retried after the first backoff step, not after a longer one.
func TestSubscriptionBackoffResets(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := storetest.NewFake(t)
		st.BreakSubscriptions(time.Hour)
		r := startPool(t, st, pool.Config{PollInterval: time.Hour},
			pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: ack})
		time.Sleep(8*time.Hour + time.Minute)
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		subs := st.Calls("Subscribe")
		for i := 1; i < len(subs); i++ {
			gap := subs[i].At.Sub(subs[i-1].At) - time.Hour
			if gap != 100*time.Millisecond {
				t.Errorf("subscription %d: resubscribed %v after the break, want 100ms: each break follows an hour that worked", i+1, gap)
			}
		}
	})
}
