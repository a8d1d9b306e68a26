package pool_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/rueidis"

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

// refusingReports is a store whose extension calls are answered with an
// error reply whenever they carry a progress report, as extend.lua once
// refused a report of "-0" (issue 29, item 7).
type refusingReports struct {
	*storetest.Fake
	refused atomic.Int32
}

func (s *refusingReports) Extend(ctx context.Context, byQueue map[string][]store.Renewal, lease time.Duration) (map[string][]store.Lost, error) {
	var errs []error
	for queue, rs := range byQueue {
		for _, r := range rs {
			if r.Progress != nil {
				// An error reply of Redis (its text does not matter here).
				errs = append(errs, &store.QueueError{Queue: queue, Op: "extend", Err: &rueidis.RedisError{}})
				break
			}
		}
	}
	if len(errs) > 0 {
		s.refused.Add(1)
		return map[string][]store.Lost{}, errors.Join(errs...)
	}
	return s.Fake.Extend(ctx, byQueue, lease)
}

// TestRefusedReportIsNotSentAgain: a progress report whose extension Redis
// answered with an error is dropped, not sent with every round: the next
// round renews the lease, and the job runs once, to its end.
func TestRefusedReportIsNotSentAgain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease = 30 * time.Second
		st := &refusingReports{Fake: storetest.NewFake(t)}
		st.Add("q", "j", time.Now())
		log := newExecLog()
		exec := log.wrap(func(ctx context.Context, _ *store.Record) pool.Outcome {
			pool.RunOf(ctx).Report(store.Progress{Percent: 5})
			select {
			case <-time.After(3 * lease): // many rounds, each of which must renew
			case <-ctx.Done():
				return pool.Outcome{Kind: pool.Retry, Err: "cancelled"}
			}
			return pool.Outcome{Kind: pool.Ack}
		})
		r := startPool(t, st, pool.Config{Lease: lease}, pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: exec})
		time.Sleep(4 * lease)
		synctest.Wait()
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		runs := log.get("j")
		if len(runs) != 1 || runs[0].Cause != nil {
			t.Fatalf("runs of j: %+v; want one, never cancelled", runs)
		}
		if _, ok := st.Job("q", "j"); ok {
			t.Error("j was not acked")
		}
		if n := st.refused.Load(); n != 1 {
			t.Errorf("%d extension calls refused, want 1: the refused report was sent again", n)
		}
	})
}
