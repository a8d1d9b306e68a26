package store_test

import (
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// shortLease is long enough to make the claim and short enough to wait out.
const shortLease = 50 * time.Millisecond

func TestRecover(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		wakes := subscribe(t, s, queue)
		enqueue(t, s, job("held", "h"))
		held := claimOne(t, s, time.Hour)
		enqueue(t, s, job("a", "p"))
		a := claimOne(t, s, shortLease)
		if a.ID != "a" {
			t.Fatalf("claimed %s, want a", a.ID)
		}
		heldLease := mustScore(t, c, k.Active, "held")
		nextWake(t, wakes) // enqueue of held
		nextWake(t, wakes) // enqueue of a

		waitLeasesExpired(t, c, k, "a")
		before := testkit.RedisNow(t, c)
		got, err := s.Recover(t.Context(), queue, leaderField(t, s, c, queue), 100, 3)
		after := testkit.RedisNow(t, c)
		if err != nil || got != (store.Recovered{Due: 1}) {
			t.Fatalf("Recover = %+v, %v; want 1 due", got, err)
		}
		snap := get(t, s, "a")
		inRange(t, "run-at", snap.Score.UnixMilli(), before, after)
		if snap.Set != store.SetDue || snap.Record.Attempt != 1 || snap.Record.Claim != 0 || string(snap.Record.Payload) != "p" ||
			!strings.Contains(snap.Record.LastError, "lease expired") {
			t.Errorf("after Recover: %+v", snap)
		}
		inRange(t, "wake-up", nextWake(t, wakes), before, after)
		// The job with a live lease is untouched.
		if snap := get(t, s, "held"); snap.Set != store.SetActive || snap.Score.UnixMilli() != heldLease || snap.Record.Claim != held.Claim {
			t.Errorf("held after Recover: %+v", snap)
		}
		// The recovering worker's token is stale; the next claim is attempt 2.
		if n, err := s.Ack(t.Context(), queue, []store.Token{a.Token()}); n != 0 || err != nil {
			t.Errorf("Ack of the expired claim = %d, %v; want 0", n, err)
		}
		if r := claimOne(t, s, time.Hour); r.ID != "a" || r.Attempt != 2 || r.Claim <= a.Claim {
			t.Errorf("claim after recovery = %+v, want attempt 2 under a new claim", r)
		}
		if got, err := s.Recover(t.Context(), queue, leaderField(t, s, c, queue), 100, 3); err != nil || got != (store.Recovered{}) {
			t.Errorf("second Recover = %+v, %v; want nothing", got, err)
		}
	})
}

func TestRecoverOutOfAttempts(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s,
			store.NewJob{ID: "own-max-1", MaxAttempts: 1},
			store.NewJob{ID: "own-max-2", MaxAttempts: 2},
			store.NewJob{ID: "default-max", Payload: []byte("p")},
		)
		got := claim(t, s, 10, shortLease)
		if len(got.Jobs) != 3 {
			t.Fatalf("claimed %d jobs, want 3", len(got.Jobs))
		}
		waitLeasesExpired(t, c, k, ids(got.Jobs)...)
		// The queue's default of 1 applies only to the job without its own max.
		rec, err := s.Recover(t.Context(), queue, leaderField(t, s, c, queue), 100, 1)
		if err != nil || rec != (store.Recovered{Due: 1, Dead: 2}) {
			t.Fatalf("Recover = %+v, %v; want 1 due, 2 dead", rec, err)
		}
		for id, want := range map[string]store.Set{"own-max-1": store.SetDead, "own-max-2": store.SetDue, "default-max": store.SetDead} {
			snap := get(t, s, id)
			if snap.Set != want || snap.Record.Attempt != 1 || !strings.Contains(snap.Record.LastError, "lease expired") {
				t.Errorf("%s: %+v, want %s with attempt 1 and a lease error", id, snap, want)
			}
			if want == store.SetDead && !strings.Contains(snap.Record.LastError, "no attempts left") {
				t.Errorf("%s: last error %q does not say the attempts are used up", id, snap.Record.LastError)
			}
		}
		if p := get(t, s, "default-max").Record.Payload; string(p) != "p" {
			t.Errorf("payload of a job recovered to dead = %q", p)
		}
	})
}

func TestRecoverLimit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("a", ""), job("b", ""), job("c", ""))
		got := claim(t, s, 10, shortLease)
		waitLeasesExpired(t, c, k, ids(got.Jobs)...)
		for _, want := range []int{2, 1, 0} {
			rec, err := s.Recover(t.Context(), queue, leaderField(t, s, c, queue), 2, 5)
			if err != nil || rec.Due != want || rec.Dead != 0 {
				t.Errorf("Recover(limit 2) = %+v, %v; want %d due", rec, err, want)
			}
		}
		before := state(t, c, k)
		for _, args := range [][2]int{{0, 5}, {-1, 5}, {10, 0}} {
			if _, err := s.Recover(t.Context(), queue, leaderField(t, s, c, queue), args[0], args[1]); err == nil {
				t.Errorf("Recover(limit %d, default max %d) succeeded, want an error", args[0], args[1])
			}
		}
		unchanged(t, c, k, before)
	})
}

func TestRecoverCorruptAndMissing(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("half", ""), job("gone", ""))
		got := claim(t, s, 10, shortLease)
		// While the jobs ran, one record was damaged and one deleted.
		do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue("half", "c2;bad").Build())
		do(t, c, c.B().Hdel().Key(k.Jobs).Field("gone").Build())
		waitLeasesExpired(t, c, k, ids(got.Jobs)...)
		// Recover never reads a record: half goes back to due, and the
		// next claim moves it to dead.
		rec, err := s.Recover(t.Context(), queue, leaderField(t, s, c, queue), 10, 5)
		if err != nil || rec != (store.Recovered{Due: 1}) {
			t.Errorf("Recover = %+v, %v; want 1 due", rec, err)
		}
		if c, err := s.Claim(t.Context(), queue, 10, time.Hour); err != nil || c.Corrupt != 1 || len(c.Jobs)+len(c.Bad) != 0 {
			t.Errorf("Claim = %+v, %v; want half found corrupt", c, err)
		}
		if snap := get(t, s, "half"); snap.Set != store.SetDead || string(snap.Record.Payload) != "c2;bad" || !strings.Contains(snap.Record.LastError, "decode") {
			t.Errorf("half = %+v (payload %q)", snap, snap.Record.Payload)
		}
		st := state(t, c, k)
		if _, ok := st.Active["gone"]; ok {
			t.Error("gone is still active")
		}
		if _, ok := st.Claims["gone"]; ok {
			t.Error("gone's claim count is left behind")
		}
	})
}
