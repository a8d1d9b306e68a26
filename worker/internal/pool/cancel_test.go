package pool_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

// TestCancelEndsRunningJob: a cancel of a running job ends its handler's
// context (cause CancelledCause) as soon as the message arrives, or at the
// next lease extension (every Lease/3) when the message is lost, or as soon
// as the wake-up subscription is back when it was lost to a broken
// subscription (the resubscription runs an extension round); the job
// stays dead with the last error "cancelled", whatever the handler
// returns, and the other job runs on.
func TestCancelEndsRunningJob(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		lose bool
		brk  time.Duration // subscriptions break this long after they start (0 = never)
		want time.Duration // when the handler's context ends, from the cancel at +5s
	}{
		{"message", false, 0, 0},
		{"message lost", true, 0, 5 * time.Second}, // the extension at +10s
		// The subscription breaks at +6s and is back 100ms later
		// (errorBackoff(1)): its extension round finds the cancel.
		{"message lost, subscription back", true, 6 * time.Second, 1100 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := storetest.NewFake(t)
				if c.lose {
					st.LoseCancels()
				}
				if c.brk > 0 {
					st.BreakSubscriptions(c.brk)
				}
				t0 := time.Now()
				st.Add("q", "j", t0)
				st.Add("q", "other", t0)
				log := newExecLog()
				exec := log.wrap(func(ctx context.Context, rec *store.Record) pool.Outcome {
					if rec.ID == "other" {
						time.Sleep(time.Minute)
						return pool.Outcome{Kind: pool.Ack}
					}
					<-ctx.Done()
					return pool.Outcome{Kind: pool.Retry, Delay: time.Second, Err: context.Cause(ctx).Error()}
				})
				r := startPool(t, st, pool.Config{Lease: 30 * time.Second},
					pool.Queue{Name: "q", Concurrency: 2, MaxAttempts: 3, Exec: exec})
				time.Sleep(5 * time.Second)
				synctest.Wait()
				cancelledAt := time.Now()
				if res, err := st.Cancel(t.Context(), "q", "j"); err != nil || res != store.CancelRunning {
					t.Fatalf("Cancel = %v, %v; want CancelRunning", res, err)
				}
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				if _, err := r.stop(t); err != nil {
					t.Fatalf("Run: %v", err)
				}
				runs := log.get("j")
				if len(runs) != 1 {
					t.Fatalf("job ran %d times, want 1", len(runs))
				}
				if !errors.Is(runs[0].Cause, errCancelled) {
					t.Errorf("job context cause %v, want the cancelled cause", runs[0].Cause)
				}
				if at := runs[0].EndAt.Sub(cancelledAt); at != c.want {
					t.Errorf("job context ended %v after the cancel, want %v", at, c.want)
				}
				if j, _ := st.Job("q", "j"); j.State != store.SetCancelled || j.Rec.LastError != store.CancelledError {
					t.Errorf("cancelled job %+v, want cancelled with the last error %q, untouched by the late retry", j, store.CancelledError)
				}
				if n := st.Count("Retry", "q"); n != 0 {
					t.Errorf("%d Retry calls, want none: a cancelled job's outcome is not written", n)
				}
				if runs := log.get("other"); len(runs) != 1 || runs[0].Cause != nil {
					t.Errorf("other job runs %+v, want one, never cancelled", runs)
				}
			})
		})
	}
}
