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

// TestProgressFlush: a handler reporting progress many times makes no call
// per report: its last report goes out within pool.ReportEvery, in a flush
// (a lease extension of the runs with a report) made at most once per
// ReportEvery, while the regular extension keeps its cadence; a report
// whose flush failed goes out with a later one.
func TestProgressFlush(t *testing.T) {
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
				if i == 105 { // +10.65s: a flush within the last ReportEvery carried a report of the last second
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
		// The report of i=105 was made at +10.55s; one made at or after
		// +10.65s - ReportEvery - 0.1s (i >= 96) must be stored.
		if first == nil || first.Percent < 96/2.5 || first.Message != "working" {
			t.Errorf("progress stored at +10.65s = %+v, want a report of the last %v (at least %.1f%%)", first, pool.ReportEvery, 96/2.5)
		}
		if last == nil || last.Percent != 99.6 {
			t.Errorf("progress stored at +35s = %+v, want the last report (99.6%%), sent again after the failed flushes", last)
		}
		// Reports for 25s: at most one flush per ReportEvery, plus the
		// regular extensions (+10s, +20s, +30s, +40s...); never one per
		// report (250 of them).
		flushes := int(25*time.Second/pool.ReportEvery) + 1
		if n := len(st.Calls("Extend")); n > flushes+6 || n < flushes/2 {
			t.Errorf("%d Extend calls, want about %d flushes and the regular extensions: one per ReportEvery, not per report", n, flushes)
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
