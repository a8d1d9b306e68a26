package pool_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

// TestProgressRidesTheExtension: a handler reporting progress many times
// makes no call of its own: the last report goes out with the next lease
// extension, which keeps its cadence; a report whose extension failed goes
// out with the next one.
func TestProgressRidesTheExtension(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease = 30 * time.Second
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("q", "j", t0)
		seen := make(chan *store.Progress, 10)
		exec := func(ctx context.Context, rec *store.Record) pool.Outcome {
			run := pool.RunOf(ctx)
			time.Sleep(50 * time.Millisecond) // reports fall between the extension ticks
			for i := range 250 {              // a report every 100ms for 25s
				run.Report(store.Progress{Percent: float64(i) / 2.5, Message: "working"})
				time.Sleep(100 * time.Millisecond)
				if i == 105 { // +10.65s: the extension at +10s carried the report of +9.95s
					j, _ := st.Job("q", "j")
					seen <- j.Rec.Progress
					st.SetDown(true) // the extension at +20s fails
				}
				if i == 205 {
					st.SetDown(false)
				}
			}
			time.Sleep(10 * time.Second) // +35s: the extension at +30s carries the last report
			j, _ := st.Job("q", "j")
			seen <- j.Rec.Progress
			return pool.Outcome{Kind: pool.Ack}
		}
		r := startPool(t, st, pool.Config{Lease: lease}, pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: exec})
		time.Sleep(time.Minute)
		synctest.Wait()
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		first, last := <-seen, <-seen
		if first == nil || first.Percent != 39.6 || first.Message != "working" {
			t.Errorf("progress stored at +10s = %+v, want the report of +9.95s (39.6%%)", first)
		}
		if last == nil || last.Percent != 99.6 {
			t.Errorf("progress stored at +30s = %+v, want the last report (99.6%%), sent again after the failed extension", last)
		}
		// One extension per lease/3 (+10s, +20s failed, +30s), none per report.
		if n := len(st.Calls("Extend")); n != 3 {
			t.Errorf("%d Extend calls, want 3: reports must not add calls", n)
		}
	})
}

// TestRunOfAnotherContext: a context that is not a job's gives a Run that
// ignores reports.
func TestRunOfAnotherContext(t *testing.T) {
	t.Parallel()
	pool.RunOf(t.Context()).Report(store.Progress{Percent: 1}) // must not panic
}
