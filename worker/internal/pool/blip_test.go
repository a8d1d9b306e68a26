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

// TestAckOutlivesABlip: a job finishes while Redis is unreachable for two
// seconds. Its ack is tried again until Redis answers, and its lease is
// renewed meanwhile, so it is acked once and never recovered to run again.
func TestAckOutlivesABlip(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease = 3 * time.Second
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("q", "j", t0)
		log := newExecLog()
		r := startPool(t, st, pool.Config{Lease: lease},
			pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: log.wrap(sleepThenAck(5 * time.Second))})
		time.Sleep(4500 * time.Millisecond)
		st.SetDown(true) // the job finishes at +5s, inside the blip
		time.Sleep(2 * time.Second)
		st.SetDown(false) // at +6.5s
		time.Sleep(10 * time.Second)
		if _, ok := st.Job("q", "j"); ok {
			t.Fatal("job still stored 10s after the blip: its ack was dropped")
		}
		if n := st.Count("Ack", "q"); n < 2 {
			t.Errorf("%d ack calls, want the failed ones and one that succeeded", n)
		}
		if _, err := r.stop(t); err != nil {
			t.Fatal(err)
		}
		if runs := log.get("j"); len(runs) != 1 {
			t.Errorf("job ran %d times, want once", len(runs))
		}
	})
}

// TestFinishedJobKeepsItsLeaseUntilAcked: while the ack of a finished job
// cannot be stored, its lease is still renewed: a leader recovering expired
// leases finds nothing to recover.
func TestFinishedJobKeepsItsLeaseUntilAcked(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease = 3 * time.Second
		st := storetest.NewFake(t)
		st.Add("q", "j", time.Now())
		r := startPool(t, st, pool.Config{Lease: lease},
			pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: sleepThenAck(time.Second)})
		st.SetQueueDown("q", true) // acks (and extends) of q fail...
		time.Sleep(1500 * time.Millisecond)
		st.SetQueueDown("q", false) // ...until +1.5s; the ack is retried with a backoff
		time.Sleep(20 * time.Second)
		if n, err := st.Recover(t.Context(), "q", "leader", 1000, 3); err != nil || n.Due+n.Dead != 0 {
			t.Errorf("recover: %+v, %v; want nothing to recover", n, err)
		}
		if _, ok := st.Job("q", "j"); ok {
			t.Error("job still stored: its ack never landed")
		}
		if _, err := r.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

// TestFailingQueueSparesOthersLeases: the node of queue "bad" is down. The
// leases of queue "good" are still renewed, so its long job runs to its end
// instead of being cancelled when the joined Extend error comes back.
func TestFailingQueueSparesOthersLeases(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease = 3 * time.Second
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("good", "long", t0)
		st.Add("bad", "other", t0)
		log := newExecLog()
		exec := log.wrap(func(ctx context.Context, _ *store.Record) pool.Outcome {
			select {
			case <-ctx.Done():
				return pool.Outcome{Kind: pool.Retry, Err: context.Cause(ctx).Error()}
			case <-time.After(time.Minute):
				return pool.Outcome{Kind: pool.Ack}
			}
		})
		r := startPool(t, st, pool.Config{Lease: lease, ShutdownTimeout: time.Second},
			pool.Queue{Name: "good", Concurrency: 1, MaxAttempts: 3, Exec: exec},
			pool.Queue{Name: "bad", Concurrency: 1, MaxAttempts: 3, Exec: exec})
		time.Sleep(100 * time.Millisecond)
		st.SetQueueDown("bad", true)
		time.Sleep(time.Minute)
		runs := log.get("long")
		if len(runs) != 1 || runs[0].Cause != nil {
			t.Fatalf("good queue's job: %+v, want one run never cancelled", runs)
		}
		if other := log.get("other"); len(other) != 1 || !errors.Is(other[0].Cause, errLeaseLost) {
			t.Errorf("bad queue's job: %+v, want cancelled: its lease could not be renewed", other)
		} else if at := other[0].EndAt.Sub(t0); at > lease {
			t.Errorf("bad queue's job cancelled at +%v, want before its lease (%v) could end in Redis", at, lease)
		}
		if _, err := r.stop(t); err != nil {
			t.Fatal(err)
		}
	})
}

// TestLateClaimAnswerIsNotStarted: Redis ran a claim, but its answer came
// back later than the lease minus the margin (the connection stalled after
// the request went through). The leader may have recovered the job and
// another process started it, so this process does not start it; the job
// runs once, from the claim after its recovery.
func TestLateClaimAnswerIsNotStarted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const lease = 3 * time.Second
		st := storetest.NewFake(t)
		st.Add("q", "j", time.Now())
		st.SetLatency("Claim", 2900*time.Millisecond) // more than lease - margin (2.7s)
		log := newExecLog()
		r := startPool(t, st, pool.Config{Lease: lease},
			pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: log.wrap(ack)})
		time.Sleep(time.Second)
		st.SetLatency("Claim", 0)
		time.Sleep(5 * time.Second) // the first claim's lease ended
		if _, err := st.Recover(t.Context(), "q", "leader", 1000, 3); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Second)
		if _, err := r.stop(t); err != nil {
			t.Fatal(err)
		}
		runs := log.get("j")
		if len(runs) != 1 || runs[0].Rec.Claim == 1 {
			t.Fatalf("runs %+v, want one, from a claim after the recovery (not claim 1)", runs)
		}
	})
}
