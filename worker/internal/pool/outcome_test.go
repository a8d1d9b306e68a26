package pool_test

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

func TestOutcomesReachStore(t *testing.T) {
	t.Parallel()
	const work = 3 * time.Second // the job ends at +3s
	for _, tc := range []struct {
		name       string
		outcome    pool.Outcome
		method     string // the one call that settles the job
		wantDelay  time.Duration
		wantErr    string
		wantState  store.Set // "" = deleted
		wantScore  time.Duration
		wantAttmpt int
		wantResult metrics.Outcome
	}{
		{
			name:       "ack",
			outcome:    pool.Outcome{Kind: pool.Ack},
			method:     "Ack",
			wantResult: metrics.OutcomeSuccess,
		},
		{
			name:       "retry",
			outcome:    pool.Outcome{Kind: pool.Retry, Delay: 30 * time.Second, Err: "boom: upstream 503"},
			method:     "Retry",
			wantDelay:  30 * time.Second,
			wantErr:    "boom: upstream 503",
			wantState:  store.SetDue,
			wantScore:  work + 30*time.Second,
			wantAttmpt: 1,
			wantResult: metrics.OutcomeRetry,
		},
		{
			name:       "dead",
			outcome:    pool.Outcome{Kind: pool.Dead, Err: "permanent: bad payload"},
			method:     "Kill",
			wantErr:    "permanent: bad payload",
			wantState:  store.SetDead,
			wantScore:  work,
			wantAttmpt: 1,
			wantResult: metrics.OutcomeDead,
		},
		{
			name:       "snooze",
			outcome:    pool.Outcome{Kind: pool.Snooze, Delay: time.Minute},
			method:     "Snooze",
			wantDelay:  time.Minute,
			wantState:  store.SetDue,
			wantScore:  work + time.Minute,
			wantAttmpt: 0,
			wantResult: metrics.OutcomeSnooze,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				st := storetest.NewFake(t)
				t0 := time.Now()
				const late = 7 * time.Second // the job was due before the pool started
				st.Add("q", "j", t0.Add(-late))
				log := newExecLog()
				obs := &observer{}
				first := true
				exec := log.wrap(func(context.Context, *store.Record) pool.Outcome {
					if !first {
						return pool.Outcome{Kind: pool.Ack} // a rerun
					}
					first = false
					time.Sleep(work)
					return tc.outcome
				})
				// Concurrency 1: the exec's state needs no lock.
				r := startPool(t, st, pool.Config{PollInterval: time.Hour, Observer: obs},
					pool.Queue{Name: "q", Concurrency: 1, MaxAttempts: 3, Exec: exec})
				time.Sleep(work)
				synctest.Wait()
				if got, want := obs.get(), []observed{{"q", late, tc.wantResult, true, work}}; !slices.Equal(got, want) {
					t.Errorf("observer heard %+v, want %+v", got, want)
				}

				calls := st.Calls(tc.method)
				if len(calls) != 1 {
					t.Fatalf("%s calls %+v, want 1", tc.method, calls)
				}
				c := calls[0]
				if c.Toks[0] != (store.Token{ID: "j", Claim: 1}) || c.Got != 1 {
					t.Errorf("%s(%v) moved %d, want token {j 1} moved", tc.method, c.Toks, c.Got)
				}
				if c.Delay != tc.wantDelay || c.ErrText != tc.wantErr {
					t.Errorf("%s delay %v, error %q; want %v, %q", tc.method, c.Delay, c.ErrText, tc.wantDelay, tc.wantErr)
				}
				for _, m := range []string{"Ack", "Retry", "Kill", "Snooze"} {
					if n := st.Count(m, ""); m != tc.method && n != 0 {
						t.Errorf("%s called %d times, want only %s", m, n, tc.method)
					}
				}
				j, ok := st.Job("q", "j")
				switch {
				case tc.wantState == "" && ok:
					t.Errorf("job %+v still stored, want deleted", j)
				case tc.wantState != "" && (j.State != tc.wantState || j.Score.Sub(t0) != tc.wantScore ||
					j.Rec.Attempt != tc.wantAttmpt || j.Rec.LastError != tc.wantErr):
					t.Errorf("job is %s at +%v, attempt %d, last error %q; want %s at +%v, attempt %d, %q",
						j.State, j.Score.Sub(t0), j.Rec.Attempt, j.Rec.LastError,
						tc.wantState, tc.wantScore, tc.wantAttmpt, tc.wantErr)
				}

				// A job put back to due runs again at its new run-at, carrying
				// what the store recorded.
				time.Sleep(2 * time.Minute)
				synctest.Wait()
				if _, err := r.stop(t); err != nil {
					t.Fatalf("Run: %v", err)
				}
				runs := log.get("j")
				if tc.wantState != store.SetDue {
					if len(runs) != 1 {
						t.Errorf("job ran %d times, want 1", len(runs))
					}
					return
				}
				if len(runs) != 2 {
					t.Fatalf("job ran %d times, want 2", len(runs))
				}
				re := runs[1]
				if got := obs.get(); len(got) != 2 || got[1].Res != metrics.OutcomeSuccess || got[1].Lag != 0 {
					t.Errorf("observer heard %+v, want a second attempt, on time, that succeeded", got)
				}
				if at := re.At.Sub(t0); at != tc.wantScore {
					t.Errorf("rerun at +%v, want +%v", at, tc.wantScore)
				}
				if re.Rec.Attempt != tc.wantAttmpt+1 || re.Rec.Claim != 2 || re.Rec.LastError != tc.wantErr {
					t.Errorf("rerun record attempt %d claim %d last error %q; want %d, 2, %q",
						re.Rec.Attempt, re.Rec.Claim, re.Rec.LastError, tc.wantAttmpt+1, tc.wantErr)
				}
			})
		})
	}
}
