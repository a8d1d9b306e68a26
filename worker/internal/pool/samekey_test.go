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

// TestEqualTokensInTwoQueues: two runs with the same (id, claim token) in
// two queues are two runs (issue 29, item 8; tokens come from each node's
// clock on a Cluster, so two queues may hand out the same one, as each
// queue of the fake counts from 1): both start and run to their end, a
// cancel message of one queue's job ends that run only, and so does an
// extension that reports one queue's lease lost.
func TestEqualTokensInTwoQueues(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		end  func(t *testing.T, st *storetest.Fake) // ends a's run of j, at +5s
		want error                                  // the cause a's run ends with
	}{
		{"both run", nil, nil},
		{"cancel message", func(t *testing.T, st *storetest.Fake) { cancelled(t, st, "a") }, errCancelled},
		{"cancel found by the extension", func(t *testing.T, st *storetest.Fake) { st.LoseCancels(); cancelled(t, st, "a") }, errCancelled},
		{"lease lost", func(t *testing.T, st *storetest.Fake) { st.Steal("a", "j") }, errLeaseLost},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				const lease = 30 * time.Second
				st := storetest.NewFake(t)
				st.Add("a", "j", time.Now())
				st.Add("b", "j", time.Now())
				log := newExecLog()
				exec := func(queue string) pool.Exec {
					return log.wrap(func(ctx context.Context, rec *store.Record) pool.Outcome {
						select {
						case <-time.After(2 * lease): // beyond the lease: renewed all along
							return pool.Outcome{Kind: pool.Ack}
						case <-ctx.Done():
							return pool.Outcome{Kind: pool.Retry, Delay: time.Hour, Err: queue + ": " + context.Cause(ctx).Error()}
						}
					})
				}
				r := startPool(t, st, pool.Config{Lease: lease},
					pool.Queue{Name: "a", Concurrency: 1, MaxAttempts: 3, Exec: exec("a")},
					pool.Queue{Name: "b", Concurrency: 1, MaxAttempts: 3, Exec: exec("b")})
				time.Sleep(5 * time.Second)
				synctest.Wait()
				for _, q := range []string{"a", "b"} {
					if j, ok := st.Job(q, "j"); !ok || j.State != store.SetActive || j.Rec.Claim != 1 {
						t.Errorf("job j of %s: %+v; want both running under claim 1", q, j)
					}
				}
				if c.end != nil {
					c.end(t, st)
				}
				time.Sleep(3 * lease)
				synctest.Wait()
				if _, err := r.stop(t); err != nil {
					t.Fatalf("Run: %v", err)
				}
				runs := log.get("j") // a's and b's, in the order they started
				if len(runs) != 2 {
					t.Fatalf("j ran %d times, want twice (once in each queue): %+v", len(runs), runs)
				}
				ended := 0
				for _, run := range runs {
					switch {
					case run.Cause == nil:
					case c.want != nil && errors.Is(run.Cause, c.want) && ended == 0:
						ended++
					default:
						t.Errorf("a run of j ended with %v", run.Cause)
					}
				}
				if c.want != nil && ended != 1 {
					t.Errorf("no run of j ended with %v", c.want)
				}
				if _, ok := st.Job("b", "j"); ok {
					t.Error("b's j was not acked: its run did not finish")
				}
				if j, ok := st.Job("a", "j"); c.want == nil && ok {
					t.Errorf("a's j: %+v; want it acked", j)
				}
			})
		})
	}
}

// cancelled cancels the running job j of queue.
func cancelled(t *testing.T, st *storetest.Fake, queue string) {
	t.Helper()
	if res, err := st.Cancel(t.Context(), queue, "j"); err != nil || res != store.CancelRunning {
		t.Errorf("Cancel = %v, %v; want CancelRunning", res, err)
	}
}
