package pool_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

// TestRateLimitSleepsUntilTheWindowFrees: with 3 jobs per second allowed and
// 11 due, the queue claims 3 at +0s, +1s and +2s and the last 2 at +3s. In
// between it makes no claim at all, although it is woken all the while:
// safety polls every 100ms, a wake-up message for an overdue job, a
// subscription that breaks and is renewed (each renewal wakes every queue),
// and slots freed by the jobs that finish.
func TestRateLimitSleepsUntilTheWindowFrees(t *testing.T) {
	t.Parallel()
	for _, skew := range []time.Duration{0, time.Hour, -time.Hour} {
		t.Run(fmt.Sprint("redis clock ", skew), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := storetest.NewFake(t)
				st.SetSkew(skew)
				st.BreakSubscriptions(150 * time.Millisecond)
				t0 := time.Now()
				r0 := t0.Add(skew) // the Redis clock at the start
				for i := range 10 {
					st.Add("q", jobID(i), r0)
				}
				log := newExecLog()
				limit := store.Rate{N: 3, Per: time.Second}
				r := startPool(t, st, pool.Config{PollInterval: 100 * time.Millisecond},
					pool.Queue{Name: "q", Concurrency: 8, MaxAttempts: 3, RateLimit: limit, Exec: log.wrap(ack)})

				time.Sleep(500 * time.Millisecond)
				// Due before the head: enqueue publishes a wake-up for it.
				st.Add("q", "overdue", r0.Add(-time.Second))
				time.Sleep(3*time.Second - 500*time.Millisecond - time.Millisecond)
				synctest.Wait()
				claims := st.Calls("Claim")
				if len(claims) != 3 {
					t.Fatalf("%d claims before +3s, want 3 (at +0s, +1s, +2s): %s", len(claims), claimSummary(t0, claims))
				}
				for i, c := range claims {
					if at := c.At.Sub(t0); at != time.Duration(i)*time.Second || c.Got != 3 || !c.Limited || c.Rate != limit {
						t.Errorf("claim %d at +%v took %d (limited %v, rate %+v), want at +%ds 3 jobs, limited, rate %+v",
							i+1, at, c.Got, c.Limited, c.Rate, i, limit)
					}
				}
				if subs := st.Count("Subscribe", ""); subs < 10 {
					t.Errorf("%d subscriptions, want many renewals to wake the queue", subs)
				}

				time.Sleep(2 * time.Second)
				synctest.Wait()
				if _, err := r.stop(t); err != nil {
					t.Fatalf("Run: %v", err)
				}
				if jobs, runs, _ := log.count(); jobs != 11 || runs != 11 {
					t.Fatalf("%d jobs ran %d times, want 11 once each", jobs, runs)
				}
				if runs := log.get("overdue"); runs[0].At.Sub(t0) != time.Second {
					t.Errorf("the overdue job started at +%v, want +1s, when the window freed", runs[0].At.Sub(t0))
				}
				var starts []time.Time
				for i := range 10 {
					starts = append(starts, log.get(jobID(i))[0].At)
				}
				starts = append(starts, log.get("overdue")[0].At)
				if most := maxInWindow(starts, time.Second); most != 3 {
					t.Errorf("%d jobs started within one second, want at most (and at best) 3", most)
				}
				if last := slices.MaxFunc(starts, time.Time.Compare).Sub(t0); last != 3*time.Second {
					t.Errorf("the last job started at +%v, want +3s", last)
				}
			})
		})
	}
}

// TestRateLimitAndHead: a job due before the window frees waits for it, and
// a job due after it runs at its run-at, without a claim in between.
func TestRateLimitAndHead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		due    time.Duration // run-at of the second job
		wantAt time.Duration // when it starts
	}{
		{"due before the window frees", 300 * time.Millisecond, time.Second},
		{"due when the window frees", time.Second, time.Second},
		{"due after the window frees", 5 * time.Second, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := storetest.NewFake(t)
				t0 := time.Now()
				st.Add("q", "first", t0)
				st.Add("q", "second", t0.Add(tc.due))
				log := newExecLog()
				r := startPool(t, st, pool.Config{PollInterval: time.Hour},
					pool.Queue{Name: "q", Concurrency: 4, MaxAttempts: 3, RateLimit: store.Rate{N: 1, Per: time.Second}, Exec: log.wrap(ack)})
				time.Sleep(10 * time.Second)
				synctest.Wait()
				if _, err := r.stop(t); err != nil {
					t.Fatalf("Run: %v", err)
				}
				if runs := log.get("first"); len(runs) != 1 || runs[0].At != t0 {
					t.Errorf("first job runs %+v, want one at +0s", runs)
				}
				if runs := log.get("second"); len(runs) != 1 || runs[0].At.Sub(t0) != tc.wantAt {
					t.Errorf("second job runs %+v, want one at +%v", runs, tc.wantAt)
				}
				// The claim at start-up, then the one that takes the second
				// job; the subscription's wake-up may add one that finds the
				// limit used up.
				if n := st.Count("Claim", "q"); n < 2 || n > 3 {
					t.Errorf("%d claims, want 2 or 3: %s", n, claimSummary(t0, st.Calls("Claim")))
				}
			})
		})
	}
}

// maxInWindow returns the most times that fall in one window [t, t+d).
func maxInWindow(times []time.Time, d time.Duration) int {
	sorted := slices.SortedFunc(slices.Values(times), time.Time.Compare)
	most, j := 0, 0
	for i := range sorted {
		for j < len(sorted) && sorted[j].Before(sorted[i].Add(d)) {
			j++
		}
		most = max(most, j-i)
	}
	return most
}

// claimSummary describes claims briefly: "+1s took 3 (limited)" each.
func claimSummary(t0 time.Time, claims []storetest.Call) string {
	var parts []string
	for _, c := range claims {
		s := fmt.Sprintf("+%v took %d", c.At.Sub(t0), c.Got)
		if c.Limited {
			s += " (limited)"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}
