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

func TestLeasesExtendedInOneCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease, work = 30 * time.Second, 100 * time.Second
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("a", "ja", t0)
		st.Add("b", "jb", t0)
		log := newExecLog()
		exec := log.wrap(sleepThenAck(work))
		r := startPool(t, st, pool.Config{Lease: lease},
			pool.Queue{Name: "a", Concurrency: 2, MaxAttempts: 3, Exec: exec},
			pool.Queue{Name: "b", Concurrency: 2, MaxAttempts: 3, Exec: exec})
		time.Sleep(work + time.Minute)
		synctest.Wait()
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}

		want := map[string][]store.Token{"a": {{ID: "ja", Claim: 1}}, "b": {{ID: "jb", Claim: 1}}}
		extends := st.Calls("Extend")
		// Every lease/3 while the jobs run: at +10s ... +90s, and maybe at
		// +100s, the instant they finish.
		if n := len(extends); n < 9 || n > 10 {
			t.Errorf("%d Extend calls for jobs running %v with lease %v, want 9 or 10", n, work, lease)
		}
		for i, c := range extends {
			at := c.At.Sub(t0)
			if at%(lease/3) != 0 || at > work {
				t.Errorf("Extend at +%v, want on a multiple of %v while the jobs run", at, lease/3)
			}
			if c.Lease != lease {
				t.Errorf("Extend lease %v, want %v", c.Lease, lease)
			}
			if at < work && !equalTokens(c.ByQueue, want) {
				t.Errorf("Extend %d at +%v carried %v, want both queues' jobs in one call: %v", i+1, at, c.ByQueue, want)
			}
		}
		for _, id := range []string{"ja", "jb"} {
			if runs := log.get(id); len(runs) != 1 || runs[0].Cause != nil {
				t.Errorf("job %s runs %+v, want one that was never cancelled", id, runs)
			}
		}
		for _, q := range []string{"a", "b"} {
			if n := st.Len(q, store.SetActive) + st.Len(q, store.SetDue); n != 0 {
				t.Errorf("queue %s: %d jobs left, want all acked", q, n)
			}
		}
	})
}

func TestLostLeaseCancelsJob(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease = 30 * time.Second
		st := storetest.NewFake(t)
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
		r := startPool(t, st, pool.Config{Lease: lease}, pool.Queue{Name: "q", Concurrency: 2, MaxAttempts: 3, Exec: exec})
		time.Sleep(15 * time.Second)
		st.Steal("q", "j") // its lease expired and another worker claimed it
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		runs := log.get("j")
		if len(runs) != 1 {
			t.Fatalf("job ran %d times, want 1", len(runs))
		}
		if !errors.Is(runs[0].Cause, errLeaseLost) {
			t.Errorf("job context cause %v, want ErrLeaseLost", runs[0].Cause)
		}
		if at := runs[0].EndAt.Sub(t0); at != 20*time.Second {
			t.Errorf("job cancelled at +%v, want +20s, at the first extension after the loss", at)
		}
		// The stale worker's Retry must not touch the job the other worker holds.
		if j, _ := st.Job("q", "j"); j.State != store.SetActive || j.Rec.Claim != 2 || j.Rec.LastError != "" {
			t.Errorf("stolen job %+v, want still active under claim 2, untouched", j)
		}
		if runs := log.get("other"); len(runs) != 1 || runs[0].Cause != nil {
			t.Errorf("other job runs %+v, want one, never cancelled", runs)
		}
	})
}

// TestLostLeaseSparesNewerClaim: after a Redis outage longer than the lease,
// a job's lease expired and it was recovered and claimed again by the same
// process while the first run still held its slot. The first run is
// cancelled before its lease can end in Redis: at +27s, the lease (no
// renewal confirmed since the claim at +0s) minus lock.Margin (3s);
// the second claim of the same id, whose lease is fine, is never cancelled.
func TestLostLeaseSparesNewerClaim(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease = 30 * time.Second
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("q", "j", t0)
		log := newExecLog()
		exec := log.wrap(func(ctx context.Context, _ *store.Record) pool.Outcome {
			<-ctx.Done()
			return pool.Outcome{Kind: pool.Retry, Delay: time.Hour, Err: context.Cause(ctx).Error()}
		})
		r := startPool(t, st, pool.Config{Lease: lease, ShutdownTimeout: time.Second},
			pool.Queue{Name: "q", Concurrency: 2, MaxAttempts: 3, Exec: exec})
		time.Sleep(time.Second)
		st.SetDown(true) // extensions at +10s, +20s, +30s fail; the lease ends at +30s
		time.Sleep(39*time.Second + 500*time.Millisecond)
		st.SetDown(false) // at +40.5s
		time.Sleep(500 * time.Millisecond)
		// The queue's leader recovers the expired lease at +41s; claim 2
		// follows after the claim loop's backoff.
		if _, err := st.Recover(t.Context(), "q", "leader", 1000, 3); err != nil {
			t.Fatal(err)
		}
		time.Sleep(19500 * time.Millisecond)
		if _, err := r.stop(t); err != nil { // at +60.5s
			t.Fatalf("Run: %v", err)
		}
		runs := log.get("j")
		if len(runs) != 2 || runs[0].Rec.Claim != 1 || runs[1].Rec.Claim != 2 {
			t.Fatalf("runs %+v, want claim 1 and then claim 2", runs)
		}
		if at := runs[1].At.Sub(t0); at < 41*time.Second || at >= 50*time.Second {
			t.Errorf("claim 2 started at +%v, want between +41s and the extension at +50s", at)
		}
		if at := runs[0].EndAt.Sub(t0); !errors.Is(runs[0].Cause, errLeaseLost) || at != 27*time.Second {
			t.Errorf("claim 1 ended at +%v with cause %v, want +27s (lease minus margin), ErrLeaseLost", at, runs[0].Cause)
		}
		if at := runs[1].EndAt.Sub(t0); !errors.Is(runs[1].Cause, errShutdown) {
			t.Errorf("claim 2 ended at +%v with cause %v, want ErrShutdown at the stop: its lease was never lost", at, runs[1].Cause)
		}
	})
}

// equalTokens compares two Extend arguments.
func equalTokens(a, b map[string][]store.Token) bool {
	if len(a) != len(b) {
		return false
	}
	for q, ta := range a {
		tb, ok := b[q]
		if !ok || len(ta) != len(tb) {
			return false
		}
		for i := range ta {
			if ta[i] != tb[i] {
				return false
			}
		}
	}
	return true
}
