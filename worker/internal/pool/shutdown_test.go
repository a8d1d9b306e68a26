package pool_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

func TestGracefulShutdownLetsJobsFinish(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("q", "slow", t0)
		st.Add("q", "later", t0.Add(3*time.Second)) // due after the stop
		log := newExecLog()
		r := startPool(t, st, pool.Config{ShutdownTimeout: 25 * time.Second},
			pool.Queue{Name: "q", Concurrency: 4, MaxAttempts: 3, Exec: log.wrap(sleepThenAck(6 * time.Second))})
		time.Sleep(time.Second)
		cancelAt := time.Now()
		r.cancel()
		time.Sleep(time.Second)
		st.Add("q", "after", time.Now()) // enqueued after the stop, with a wake-up
		sum, err := r.wait(t)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if want := (pool.Summary{Finished: 1}); sum != want {
			t.Errorf("Summary = %+v, want %+v", sum, want)
		}
		if d := r.ended.Sub(cancelAt); d != 5*time.Second {
			t.Errorf("Run returned %v after the cancel, want 5s, when the job finished", d)
		}
		if runs := log.get("slow"); len(runs) != 1 || runs[0].Cause != nil {
			t.Errorf("slow job runs %+v, want one, never cancelled", runs)
		}
		if _, ok := st.Job("q", "slow"); ok {
			t.Errorf("slow job still stored, want acked")
		}
		for _, c := range st.Calls("Claim") {
			if c.At.After(cancelAt) {
				t.Errorf("claim at +%v, after the stop at +%v", c.At.Sub(t0), cancelAt.Sub(t0))
			}
		}
		for _, id := range []string{"later", "after"} {
			if j, _ := st.Job("q", id); j.State != store.SetDue || j.Rec.Claim != 0 {
				t.Errorf("job %s %+v, want left due, never claimed", id, j)
			}
		}
		assertNoCalls(t, st, "Snooze", "Retry", "Kill")
	})
}

func TestHardStopHandsJobsBack(t *testing.T) {
	t.Parallel()
	const (
		timeout  = 25 * time.Second
		grace    = time.Second
		cancelAt = time.Second // when Run's context ends
	)
	for _, tc := range []struct {
		name       string
		exec       pool.Exec
		wantCancel bool          // the job's context ends at the shutdown timeout
		wantReturn time.Duration // Run returns, after the cancel
		wantSum    pool.Summary
		wantSnooze bool // handed back: due again, attempt not spent
		wantResult metrics.Outcome
	}{
		{
			name:       "ignores its context",
			exec:       sleepThenAck(time.Minute),
			wantCancel: true,
			wantReturn: timeout + grace,
			wantSum:    pool.Summary{Returned: 1},
			wantSnooze: true,
			wantResult: metrics.OutcomeCancelled,
		},
		{
			name: "returns an error when cancelled",
			exec: func(ctx context.Context, _ *store.Record) pool.Outcome {
				<-ctx.Done()
				return pool.Outcome{Kind: pool.Retry, Delay: time.Minute, Err: context.Cause(ctx).Error()}
			},
			wantCancel: true,
			wantReturn: timeout,
			wantSum:    pool.Summary{Returned: 1},
			wantSnooze: true,
			wantResult: metrics.OutcomeCancelled,
		},
		{
			name: "fails permanently when cancelled",
			exec: func(ctx context.Context, _ *store.Record) pool.Outcome {
				<-ctx.Done()
				return pool.Outcome{Kind: pool.Dead, Err: "cancelled"}
			},
			wantCancel: true,
			wantReturn: timeout,
			wantSum:    pool.Summary{Returned: 1},
			wantSnooze: true,
			wantResult: metrics.OutcomeCancelled,
		},
		{
			name: "finishes within the grace",
			exec: func(ctx context.Context, _ *store.Record) pool.Outcome {
				<-ctx.Done()
				time.Sleep(grace / 2)
				return pool.Outcome{Kind: pool.Ack}
			},
			wantCancel: true,
			wantReturn: timeout + grace/2,
			wantSum:    pool.Summary{Finished: 1},
			wantResult: metrics.OutcomeSuccess,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := storetest.NewFake(t)
				t0 := time.Now()
				st.Add("q", "j", t0)
				log := newExecLog()
				obs := &observer{}
				r := startPool(t, st, pool.Config{ShutdownTimeout: timeout, ReturnGrace: grace, Observer: obs},
					pool.Queue{Name: "q", Concurrency: 2, MaxAttempts: 3, Exec: log.wrap(tc.exec)})
				time.Sleep(cancelAt)
				sum, err := r.stop(t)
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if sum != tc.wantSum {
					t.Errorf("Summary = %+v, want %+v", sum, tc.wantSum)
				}
				if d := r.ended.Sub(t0) - cancelAt; d != tc.wantReturn {
					t.Errorf("Run returned %v after the cancel, want %v", d, tc.wantReturn)
				}
				runs := log.get("j")
				if len(runs) != 1 {
					t.Fatalf("job ran %d times, want 1", len(runs))
				}
				if tc.wantCancel {
					if !errors.Is(runs[0].Cause, errShutdown) {
						t.Errorf("job context cause %v, want ErrShutdown", runs[0].Cause)
					}
					if at := runs[0].EndAt.Sub(t0) - cancelAt; at != timeout {
						t.Errorf("job context ended %v after the cancel, want %v", at, timeout)
					}
				}
				j, ok := st.Job("q", "j")
				if tc.wantSnooze {
					snoozes := st.Calls("Snooze")
					if len(snoozes) != 1 || snoozes[0].Delay != 0 || snoozes[0].Got != 1 ||
						snoozes[0].Toks[0] != (store.Token{ID: "j", Claim: 1}) {
						t.Errorf("Snooze calls %+v, want one handing back {j 1} with delay 0", snoozes)
					}
					if j.State != store.SetDue || j.Rec.Attempt != 0 || j.Score.After(r.ended) {
						t.Errorf("job %+v, want due by %v with its attempt given back", j, r.ended.Sub(t0))
					}
				} else if ok {
					t.Errorf("job %+v still stored, want acked", j)
				}
				// Let a handler that ignores its context run out: whatever it
				// returns now must not reach the store.
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				assertNoCalls(t, st, "Retry", "Kill")
				if tc.wantSnooze {
					assertNoCalls(t, st, "Ack")
				}
				if got := obs.get(); len(got) != 1 || got[0].Res != tc.wantResult || !got[0].Started {
					t.Errorf("observer heard %+v, want one started job ending %s", got, tc.wantResult)
				}
				if n := st.Count("Snooze", ""); tc.wantSnooze && n != 1 {
					t.Errorf("%d Snooze calls, want 1", n)
				}
			})
		})
	}
}

func TestLeasesExtendedWhileDraining(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease = 30 * time.Second
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("q", "j", t0)
		r := startPool(t, st, pool.Config{Lease: lease, ShutdownTimeout: 2 * time.Minute},
			pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: sleepThenAck(95 * time.Second)})
		time.Sleep(5 * time.Second)
		sum, err := r.stop(t)
		if err != nil || sum != (pool.Summary{Finished: 1}) {
			t.Fatalf("Run = %+v, %v; want Finished 1, nil", sum, err)
		}
		var at []time.Duration
		for _, c := range st.Calls("Extend") {
			at = append(at, c.At.Sub(t0))
		}
		// Every lease/3 until the job finished at +95s, though Run's context
		// ended at +5s.
		if len(at) != 9 || at[8] != 90*time.Second {
			t.Errorf("Extend calls at %v, want every 10s up to +90s", at)
		}
		if _, ok := st.Job("q", "j"); ok {
			t.Errorf("job still stored, want acked")
		}
		for _, c := range st.Calls("Recover") {
			if c.At.Sub(t0) > 5*time.Second {
				t.Errorf("Recover at +%v, after Run's context ended at +5s", c.At.Sub(t0))
			}
		}
	})
}

// TestHardStopWaitsForOutcomeWrites: a handler that returns right at the
// shutdown timeout has its hand-back written by its worker goroutine. Run
// must not return (and let the process exit) before that write is done.
func TestHardStopWaitsForOutcomeWrites(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := storetest.NewFake(t)
		st.SetLatency("Snooze", 2*time.Second) // a slow Redis
		t0 := time.Now()
		st.Add("q", "j", t0)
		exec := func(ctx context.Context, _ *store.Record) pool.Outcome {
			<-ctx.Done()
			return pool.Outcome{Kind: pool.Retry, Err: "cancelled"}
		}
		r := startPool(t, st, pool.Config{ShutdownTimeout: 25 * time.Second, ReturnGrace: time.Second},
			pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: exec})
		time.Sleep(time.Second)
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if n := st.Count("Snooze", ""); n != 1 {
			t.Errorf("Run returned at +%v with %d Snooze calls done, want the hand-back written first",
				r.ended.Sub(t0), n)
		}
		time.Sleep(time.Minute) // let the write finish before the bubble ends
	})
}

// TestHardStopSignal: HardStop closed during the drain ends it at once, as
// the shutdown timeout would: the running job is cancelled and handed back.
func TestHardStopSignal(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := storetest.NewFake(t)
		st.Add("q", "slow", time.Now())
		log := newExecLog()
		hurry := make(chan struct{})
		r := startPool(t, st, pool.Config{ShutdownTimeout: time.Minute, HardStop: hurry},
			pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: log.wrap(func(ctx context.Context, _ *store.Record) pool.Outcome {
				<-ctx.Done()
				return pool.Outcome{Kind: pool.Retry, Err: "cancelled"}
			})})
		time.Sleep(time.Second)
		r.cancel()
		time.Sleep(2 * time.Second) // draining: the job goes on
		if runs := log.get("slow"); len(runs) != 1 || runs[0].Cause != nil {
			t.Fatalf("before HardStop: runs %+v, want one still running", runs)
		}
		hurriedAt := time.Now()
		close(hurry)
		sum, err := r.wait(t)
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if d := r.ended.Sub(hurriedAt); d > time.Second {
			t.Errorf("Run returned %v after HardStop, want at once (the handler returned)", d)
		}
		if want := (pool.Summary{Returned: 1}); sum != want {
			t.Errorf("Summary = %+v, want %+v", sum, want)
		}
		if runs := log.get("slow"); len(runs) != 1 || !errors.Is(runs[0].Cause, errShutdown) {
			t.Errorf("runs %+v, want one cancelled with the shutdown cause", runs)
		}
		if j, _ := st.Job("q", "slow"); j.State != store.SetDue || j.Rec.Attempt != 0 {
			t.Errorf("job %+v, want due again, no attempt spent", j)
		}
	})
}
