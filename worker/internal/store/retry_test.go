package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestRetry(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, store.NewJob{ID: "a", MaxAttempts: 5, Payload: []byte("p")})
		r := claimOne(t, s, time.Hour)

		before := testkit.RedisNow(t, c)
		ok, err := s.Retry(t.Context(), queue, r.Token(), 30*time.Second, "boom: 503")
		after := testkit.RedisNow(t, c)
		if !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		snap := get(t, s, "a")
		if snap.Set != store.SetDue {
			t.Errorf("set = %s, want due", snap.Set)
		}
		inRange(t, "run-at", snap.Score.UnixMilli(), before+30_000, after+30_000)
		// The attempt stays spent; the job holds no claim token any more.
		if got := snap.Record; got.Attempt != 1 || got.Claim != 0 || got.LastError != "boom: 503" || string(got.Payload) != "p" || got.MaxAttempts != 5 {
			t.Errorf("record after retry = %+v", got)
		}
		if _, ok := testkit.ZScore(t, c, k.Active, "a"); ok {
			t.Error("a is still active")
		}

		// A retry with no delay is due at once; the next claim is the
		// second attempt and keeps the last error until it fails again.
		before = testkit.RedisNow(t, c)
		do(t, c, c.B().Zadd().Key(k.Due).ScoreMember().ScoreMember(float64(before), "a").Build())
		first := r
		r = claimOne(t, s, time.Hour)
		if r.Attempt != 2 || r.Claim <= first.Claim || r.LastError != "boom: 503" {
			t.Errorf("second claim = %+v, want attempt 2 under a token after %d", r, first.Claim)
		}
		before = testkit.RedisNow(t, c)
		if ok, err := s.Retry(t.Context(), queue, r.Token(), 0, "again"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		inRange(t, "run-at", mustScore(t, c, k.Due, "a"), before, testkit.RedisNow(t, c))
	})
}

func TestKill(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("a", "p"))
		r := claimOne(t, s, time.Hour)
		before := testkit.RedisNow(t, c)
		if ok, err := s.Kill(t.Context(), queue, r.Token(), "permanent: bad input"); !ok || err != nil {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		after := testkit.RedisNow(t, c)
		snap := get(t, s, "a")
		if snap.Set != store.SetDead || snap.Record.LastError != "permanent: bad input" || snap.Record.Attempt != 1 || string(snap.Record.Payload) != "p" {
			t.Errorf("after Kill: %+v", snap)
		}
		inRange(t, "time of death", snap.Score.UnixMilli(), before, after)
		for _, key := range []string{k.Due, k.Active} {
			if _, ok := testkit.ZScore(t, c, key, "a"); ok {
				t.Errorf("a is still in %s", key)
			}
		}
	})
}

func TestRetryStaleToken(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s)
		enqueue(t, s, job("a", ""), job("due", ""))
		first := claimOne(t, s, time.Hour)
		if first.ID != "a" {
			t.Fatalf("claimed %s, want a", first.ID)
		}
		if n, err := s.Snooze(t.Context(), queue, []store.Token{first.Token()}, time.Hour); n != 1 || err != nil {
			t.Fatalf("Snooze = %d, %v", n, err)
		}
		do(t, c, c.B().Zadd().Key(k.Due).ScoreMember().ScoreMember(0, "a").Build())
		second := claimOne(t, s, time.Hour) // a under a new claim
		if second.ID != "a" || second.Claim <= first.Claim {
			t.Fatalf("claimed %+v, want a under a claim after %d", second, first.Claim)
		}

		before := state(t, c, k)
		for _, tok := range []store.Token{
			first.Token(),                      // claimed again since
			{ID: "a", Claim: second.Claim + 1}, // never issued
			{ID: "due", Claim: 0},              // not active
			{ID: "seed-dead", Claim: 1},        // dead
			{ID: "seed-active", Claim: 0},      // active under another claim
			{ID: "missing", Claim: 1},
		} {
			for _, kill := range []bool{false, true} {
				var ok bool
				var err error
				if kill {
					ok, err = s.Kill(t.Context(), queue, tok, "stale")
				} else {
					ok, err = s.Retry(t.Context(), queue, tok, 0, "stale")
				}
				if ok || err != nil {
					t.Errorf("kill=%v %+v: %v, %v; want false", kill, tok, ok, err)
				}
			}
		}
		unchanged(t, c, k, before)
	})
}

func TestSnooze(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, store.NewJob{ID: "a", MaxAttempts: 2})
		first := claimOne(t, s, time.Hour)
		if ok, err := s.Retry(t.Context(), queue, first.Token(), 0, "first failure"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		r := claimOne(t, s, time.Hour) // attempt 2, under a new token
		if r.Attempt != 2 || r.Claim <= first.Claim {
			t.Fatalf("second claim = %+v, want attempt 2 under a token after %d", r, first.Claim)
		}

		before := testkit.RedisNow(t, c)
		n, err := s.Snooze(t.Context(), queue, []store.Token{r.Token()}, 2*time.Minute)
		after := testkit.RedisNow(t, c)
		if n != 1 || err != nil {
			t.Fatalf("Snooze = %d, %v", n, err)
		}
		snap := get(t, s, "a")
		inRange(t, "run-at", snap.Score.UnixMilli(), before+120_000, after+120_000)
		// The attempt is given back: spent attempts fall to 1.
		if snap.Set != store.SetDue || snap.Record.Attempt != 1 || snap.Record.Claim != 0 || snap.Record.LastError != "first failure" {
			t.Errorf("after Snooze: %+v", snap)
		}
		if _, ok := testkit.ZScore(t, c, k.Active, "a"); ok {
			t.Error("a is still active")
		}

		// The next claim is attempt 2 again, under a new claim token.
		do(t, c, c.B().Zadd().Key(k.Due).ScoreMember().ScoreMember(0, "a").Build())
		r2 := claimOne(t, s, time.Hour)
		if r2.Attempt != 2 || r2.Claim <= r.Claim {
			t.Errorf("claim after snooze = %+v, want attempt 2 under a token after %d", r2, r.Claim)
		}
		// The old token is stale now.
		before2 := state(t, c, k)
		if n, err := s.Snooze(t.Context(), queue, []store.Token{r.Token()}, 0); n != 0 || err != nil {
			t.Errorf("Snooze of a stale token = %d, %v; want 0", n, err)
		}
		unchanged(t, c, k, before2)
	})
}

func TestSnoozeBatch(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		const n = 1100 // two script calls
		jobs := make([]store.NewJob, n)
		for i := range jobs {
			jobs[i] = job(fmt.Sprintf("j%04d", i), "")
		}
		enqueue(t, s, jobs...)
		var toks []store.Token
		for len(toks) < n {
			toks = append(toks, tokens(claim(t, s, store.MaxBatch, time.Hour).Jobs)...)
		}
		toks[0].Claim, toks[1050].Claim = 5, 5 // stale in each call
		toks = append(toks, toks[1])           // a repeat: moved once
		moved, err := s.Snooze(t.Context(), queue, toks, 0)
		if err != nil || moved != n-2 {
			t.Errorf("Snooze = %d, %v; want %d", moved, err, n-2)
		}
		st, err := s.Stats(t.Context(), queue)
		if err != nil || st != (store.Stats{Ready: n - 2, Active: 2}) {
			t.Errorf("Stats = %+v, %v", st, err)
		}
		if snap := get(t, s, toks[1].ID); snap.Set != store.SetDue || snap.Record.Attempt != 0 {
			t.Errorf("snoozed twice in one call: %+v, want due with attempt 0", snap)
		}
	})
}
