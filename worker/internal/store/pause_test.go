package store_test

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestPause: the flag is one small key in the queue's slot, set and
// deleted once; each change publishes on the wake channel (the pause as
// "paused", which reaches onWake as run-at 0; the resume at the Redis
// clock), a call that changes nothing publishes nothing; stats report it.
func TestPause(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		wakes := subscribe(t, s, queue)

		if changed, err := s.Pause(ctx, queue); err != nil || !changed {
			t.Fatalf("Pause = %v, %v; want a change", changed, err)
		}
		if v, err := c.Do(ctx, c.B().Get().Key(k.Paused).Build()).ToString(); err != nil || v != "1" {
			t.Fatalf("paused key = %q, %v; want \"1\"", v, err)
		}
		if at := nextWake(t, wakes); at != 0 {
			t.Errorf("the pause announced run-at %d, want 0 (%q is not a time)", at, store.PausedMessage)
		}
		if changed, err := s.Pause(ctx, queue); err != nil || changed {
			t.Errorf("second Pause = %v, %v; want no change", changed, err)
		}
		if p, err := s.Paused(ctx, queue); err != nil || !p {
			t.Errorf("Paused = %v, %v; want true", p, err)
		}
		if st, err := s.Stats(ctx, queue); err != nil || st != (store.Stats{Paused: true}) {
			t.Errorf("Stats = %+v, %v; want paused", st, err)
		}

		before := testkit.RedisNow(t, c)
		if changed, err := s.Resume(ctx, queue); err != nil || !changed {
			t.Fatalf("Resume = %v, %v; want a change", changed, err)
		}
		after := testkit.RedisNow(t, c)
		if at := nextWake(t, wakes); at < before || at > after {
			t.Errorf("the resume announced run-at %d, want within [%d, %d]", at, before, after)
		}
		if changed, err := s.Resume(ctx, queue); err != nil || changed {
			t.Errorf("second Resume = %v, %v; want no change", changed, err)
		}
		noWake(t, wakes) // neither second call published
		if testkit.Exists(t, c, k.Paused) {
			t.Errorf("the paused key outlived the resume")
		}
		if p, err := s.Paused(ctx, queue); err != nil || p {
			t.Errorf("Paused = %v, %v; want false", p, err)
		}
		if st, err := s.Stats(ctx, queue); err != nil || st.Paused {
			t.Errorf("Stats = %+v, %v; want running", st, err)
		}
	})
}

// TestClaimWhilePausedChangesNothing: a paused claim, limited or not,
// answers next_ms -2 with no job and writes nothing: not the due jobs, not
// the claim token, not the rate window.
func TestClaimWhilePausedChangesNothing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		seed(t, s)
		enqueue(t, s, job("ready", "r"))
		if _, err := s.Pause(ctx, queue); err != nil {
			t.Fatal(err)
		}
		before := state(t, c, k)
		keys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Paused, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex}
		for _, args := range [][]string{{"10", "60000"}, {"10", "60000", "5", "1000"}} {
			vals, err := script.Claim.Exec(ctx, script.NewConn(c, nil), keys, args).AsIntSlice()
			if err != nil || len(vals) != 4 || vals[1] != -2 || vals[2] != 0 {
				t.Errorf("claim %v while paused = %v, %v; want {now, -2, 0, weight}", args, vals, err)
			}
		}
		cl, err := s.ClaimLimited(ctx, queue, 10, time.Minute, store.Rate{N: 5, Per: time.Second})
		if err != nil || !cl.Paused || cl.Limited || len(cl.Jobs) != 0 || !cl.Next.IsZero() || cl.Now.IsZero() {
			t.Errorf("ClaimLimited while paused = %+v, %v; want paused, nothing", cl, err)
		}
		unchanged(t, c, k, before)
	})
}
