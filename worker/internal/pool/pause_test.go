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

// TestPausedQueueSleeps: while its queue is paused, a claim loop takes
// nothing and does not spin: it claims once per wake-up and safety poll, as
// for an empty queue, and a freed slot does not make it claim. The job that
// was running when the pause came finishes and is acked. The resume's
// wake-up starts the waiting jobs at once, not at the next poll.
func TestPausedQueueSleeps(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		st := storetest.NewFake(t)
		t0 := time.Now()
		st.Add("q", "running", t0)
		log := newExecLog()
		exec := log.wrap(func(ctx context.Context, rec *store.Record) pool.Outcome {
			if rec.ID == "running" {
				time.Sleep(time.Minute)
			}
			return pool.Outcome{Kind: pool.Ack}
		})
		const poll = 10 * time.Minute
		r := startPool(t, st, pool.Config{PollInterval: poll}, pool.Queue{Name: "q", Concurrency: 4, MaxAttempts: 3, Exec: exec})
		synctest.Wait()
		if runs := log.get("running"); len(runs) != 1 {
			t.Fatalf("the first job ran %d times before the pause, want 1", len(runs))
		}

		if changed, err := st.Pause(t.Context(), "q"); !changed || err != nil {
			t.Fatalf("Pause = %t, %v", changed, err)
		}
		synctest.Wait()
		before := st.Count("Claim", "q")
		for i := range 100 {
			st.Add("q", jobID(i), time.Now())
		}
		st.Add("q", "later", t0.Add(30*time.Minute)) // becomes due while paused
		time.Sleep(time.Hour - time.Second)
		synctest.Wait()

		if jobs, _, _ := log.count(); jobs != 1 {
			t.Errorf("%d jobs ran while the queue was paused, want only the one running before", jobs)
		}
		if runs := log.get("running"); len(runs) != 1 || runs[0].Cause != nil {
			t.Errorf("the running job: %+v, want one run that ended by itself", runs)
		}
		if _, ok := st.Job("q", "running"); ok {
			t.Error("the job that was running when the pause came was not acked")
		}
		// At most: the pause message, the wake-up of the first job added
		// and one safety poll every 10 minutes.
		claims := st.Calls("Claim")[before-1:]
		if n, most := len(claims)-1, 2+int(time.Hour/poll); n > most {
			t.Errorf("%d claims during an hour of pause, want at most %d: %+v", n, most, claims)
		}
		for _, c := range claims {
			if !c.Paused || c.Got != 0 {
				t.Errorf("a claim while paused: %+v, want Paused and no job", c)
			}
		}

		resumed := time.Now()
		if changed, err := st.Resume(t.Context(), "q"); !changed || err != nil {
			t.Fatalf("Resume = %t, %v", changed, err)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if runs := log.get(jobID(0)); len(runs) != 1 || !runs[0].At.Equal(resumed) {
			t.Errorf("the first waiting job: %+v, want it started at the resume (+%v)", runs, resumed.Sub(t0))
		}
		if jobs, _, _ := log.count(); jobs != 102 {
			t.Errorf("%d jobs ran within a second of the resume, want all 102", jobs)
		}
		if _, err := r.stop(t); err != nil {
			t.Fatalf("Run: %v", err)
		}
	})
}
