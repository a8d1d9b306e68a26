package pool_test

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

func TestClaimAsksForFreeSlots(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := storetest.NewFake(t)
		now := time.Now()
		for i := range 160 {
			st.Add("q", jobID(i), now)
		}
		release := make(chan struct{})
		log := newExecLog()
		exec := log.wrap(func(context.Context, *store.Record) pool.Outcome {
			<-release
			return pool.Outcome{Kind: pool.Ack}
		})
		r := startPool(t, st, pool.Config{}, pool.Queue{Name: "q", Concurrency: 16, MaxAttempts: 3, Exec: exec})

		synctest.Wait()
		claims := st.Calls("Claim")
		if len(claims) != 1 || claims[0].N != 16 || claims[0].Got != 16 {
			t.Fatalf("with every slot busy: claims = %+v, want one claim of 16 jobs", claims)
		}
		// Slots that are busy are not claimed for, however often the loop wakes.
		time.Sleep(30 * time.Second)
		if n := st.Count("Claim", "q"); n != 1 {
			t.Errorf("%d claims while all 16 slots were busy, want 1", n)
		}
		// With a backlog waiting, one free slot waits up to a millisecond
		// for others, so that one claim fills many; then it is claimed for.
		freed := time.Now()
		release <- struct{}{}
		synctest.Wait()
		if n := st.Count("Claim", "q"); n != 1 {
			t.Errorf("claimed at once for a single free slot while a backlog waits")
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		claims = st.Calls("Claim")
		if len(claims) != 2 || claims[1].N != 1 || claims[1].At.Sub(freed) != time.Millisecond {
			t.Errorf("after one job finished: claims = %+v, want a second claim of 1 job 1ms later", claims)
		}
		close(release)
		time.Sleep(time.Minute)
		synctest.Wait()
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if _, runs, maxRunning := log.count(); runs != 160 || maxRunning != 16 {
			t.Errorf("%d runs, at most %d at once; want 160 and 16", runs, maxRunning)
		}
	})
}

func TestClaimBatchesInstantJobs(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		const jobs, concurrency = 160, 16
		st := storetest.NewFake(t)
		// A claim takes a round trip. While it is on the wire the jobs that
		// run meanwhile finish, so the next claim asks for all their slots:
		// two claims in a row always ask for at least Concurrency jobs
		// together, whatever order goroutines run in.
		st.SetLatency("Claim", time.Millisecond)
		now := time.Now()
		for i := range jobs {
			st.Add("q", jobID(i), now)
		}
		log := newExecLog()
		r := startPool(t, st, pool.Config{}, pool.Queue{Name: "q", Concurrency: concurrency, MaxAttempts: 3, Exec: log.wrap(ack)})
		time.Sleep(time.Second)
		synctest.Wait()
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if _, runs, _ := log.count(); runs != jobs {
			t.Fatalf("%d runs, want %d", runs, jobs)
		}
		claims := st.Calls("Claim")
		got := 0
		for _, c := range claims {
			got += c.Got
			if c.N > concurrency {
				t.Errorf("claim asked for %d jobs, more than the concurrency", c.N)
			}
		}
		if got != jobs {
			t.Errorf("claims handed out %d jobs, want %d", got, jobs)
		}
		// 2 per Concurrency jobs, plus the claim that finds the queue empty
		// and the one the subscription triggers.
		if limit := 2*jobs/concurrency + 3; len(claims) > limit {
			t.Errorf("%d claims for %d jobs, want at most %d", len(claims), jobs, limit)
		}
		t.Logf("%d claims for %d jobs", len(claims), jobs)
	})
}

func TestClaimErrorsBackOff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("q", "j", t0)
		st.FailClaims(3)
		log := newExecLog()
		r := startPool(t, st, pool.Config{}, pool.Queue{Name: "q", Concurrency: 2, MaxAttempts: 3, Exec: log.wrap(ack)})
		time.Sleep(2 * time.Second)
		synctest.Wait()
		sum, err := r.stop(t)
		if err != nil || sum != (pool.Summary{}) {
			t.Fatalf("Run = %+v, %v; want zero summary, nil", sum, err)
		}
		claims := st.Calls("Claim")
		want := []struct {
			at     time.Duration
			failed bool
		}{{0, true}, {100 * time.Millisecond, true}, {300 * time.Millisecond, true}, {700 * time.Millisecond, false}}
		if len(claims) < len(want) {
			t.Fatalf("%d claims, want at least %d", len(claims), len(want))
		}
		for i, w := range want {
			if at, failed := claims[i].At.Sub(t0), claims[i].Err != nil; at != w.at || failed != w.failed {
				t.Errorf("claim %d at +%v failed=%v, want at +%v failed=%v", i+1, at, failed, w.at, w.failed)
			}
		}
		if runs := log.get("j"); len(runs) != 1 || runs[0].At.Sub(t0) != 700*time.Millisecond {
			t.Errorf("job runs %+v, want one at +700ms", runs)
		}
		if _, ok := st.Job("q", "j"); ok {
			t.Errorf("job still in the store, want acked")
		}
	})
}

func TestUndecodableRecordsAreKilled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.AddBad("q", "bad", t0)
		st.Add("q", "good", t0)
		log := newExecLog()
		r := startPool(t, st, pool.Config{}, pool.Queue{Name: "q", Concurrency: 4, MaxAttempts: 3, Exec: log.wrap(ack)})
		time.Sleep(time.Second)
		synctest.Wait()
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
		kills := st.Calls("Kill")
		if len(kills) != 1 {
			t.Fatalf("Kill calls %+v, want 1", kills)
		}
		k := kills[0]
		if k.Toks[0] != (store.Token{ID: "bad", Claim: 1}) || k.Got != 1 {
			t.Errorf("Kill(%v) moved %d, want the bad job's token {bad 1} moved", k.Toks[0], k.Got)
		}
		if want := "decode"; !strings.Contains(k.ErrText, want) {
			t.Errorf("Kill error text %q does not mention %q", k.ErrText, want)
		}
		if j, _ := st.Job("q", "bad"); j.State != store.SetDead {
			t.Errorf("bad job is %s, want dead", j.State)
		}
		if runs := log.get("bad"); len(runs) != 0 {
			t.Errorf("bad job ran %d times, want never", len(runs))
		}
		if runs := log.get("good"); len(runs) != 1 {
			t.Errorf("good job ran %d times, want 1", len(runs))
		}
	})
}
