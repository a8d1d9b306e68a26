package store_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestClaimOrder(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		base := testkit.RedisNow(t, c) - 10_000
		at := func(ms int64) time.Time { return time.UnixMilli(base + ms) }
		// Enqueued out of order; equal run-ats are ordered by id.
		enqueue(t, s,
			store.NewJob{ID: "e", At: at(300)},
			store.NewJob{ID: "b", At: at(100)},
			store.NewJob{ID: "d", At: at(200)},
			store.NewJob{ID: "c", At: at(200)},
			store.NewJob{ID: "a", At: at(100)},
			store.NewJob{ID: "later", Delay: time.Hour},
		)
		first := claim(t, s, 2, time.Hour)
		if got, want := ids(first.Jobs), []string{"a", "b"}; !slices.Equal(got, want) {
			t.Errorf("first claim = %v, want %v", got, want)
		}
		for _, r := range first.Jobs {
			if !r.RunAt.Equal(at(100)) {
				t.Errorf("%s: RunAt = %v, want %v", r.ID, r.RunAt, at(100))
			}
		}
		if !first.Next.Equal(at(200)) {
			t.Errorf("Next = %v, want the run-at of c (%v)", first.Next, at(200))
		}
		rest := claim(t, s, 100, time.Hour)
		if got, want := ids(rest.Jobs), []string{"c", "d", "e"}; !slices.Equal(got, want) {
			t.Errorf("second claim = %v, want %v", got, want)
		}
		if again := claim(t, s, 100, time.Hour); len(again.Jobs) != 0 {
			t.Errorf("third claim = %v, want nothing", ids(again.Jobs))
		}
	})
}

func TestClaimNeverEarly(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		empty := claim(t, s, 10, time.Hour)
		if len(empty.Jobs) != 0 || !empty.Next.IsZero() || empty.Corrupt != 0 {
			t.Errorf("claim on an empty queue = %+v", empty)
		}

		enqueue(t, s, store.NewJob{ID: "soon", Delay: time.Hour})
		got := claim(t, s, 10, time.Hour)
		if len(got.Jobs) != 0 {
			t.Errorf("claimed %v before its run-at", ids(got.Jobs))
		}
		if want := mustScore(t, c, k.Due, "soon"); got.Next.UnixMilli() != want {
			t.Errorf("Next = %d, want the job's run-at %d", got.Next.UnixMilli(), want)
		}
		if snap := get(t, s, "soon"); snap.Set != store.SetDue || snap.Record.Claim != 0 {
			t.Errorf("job after an early claim = %+v", snap)
		}
	})
}

func TestClaimSpendsAnAttempt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, store.NewJob{ID: "a", MaxAttempts: 2, Timeout: time.Minute, Payload: []byte("p")})
		before := testkit.RedisNow(t, c)
		got := claim(t, s, 10, 45*time.Second)
		after := testkit.RedisNow(t, c)
		if len(got.Jobs) != 1 {
			t.Fatalf("claimed %d jobs, want 1", len(got.Jobs))
		}
		r := got.Jobs[0]
		if r.ID != "a" || r.Claim < got.Now.UnixMicro() || r.Claim >= 1<<53 || r.Attempt != 1 || r.MaxAttempts != 2 || r.Timeout != time.Minute || string(r.Payload) != "p" {
			t.Errorf("claimed %+v", r)
		}
		// Now is the Redis clock, in µs; the lease runs from it.
		inRange(t, "claim Now", got.Now.UnixMilli(), before, after)
		if lease := mustScore(t, c, k.Active, "a"); lease != got.Now.UnixMilli()+45_000 {
			t.Errorf("lease deadline = %d, want Now+45s = %d", lease, got.Now.UnixMilli()+45_000)
		}
		if _, ok := testkit.ZScore(t, c, k.Due, "a"); ok {
			t.Error("a is still in due")
		}
		// The token is the Redis clock in µs, and the queue's last token.
		tok := strconv.FormatInt(r.Claim, 10)
		if n, _ := testkit.HGet(t, c, k.Claims, "a"); n != tok {
			t.Errorf("claims[a] = %q, want %s", n, tok)
		}
		if n, _ := testkit.HGet(t, c, k.Claims, ""); n != tok {
			t.Errorf("claims[''] = %q, want %s", n, tok)
		}
		if snap := get(t, s, "a"); snap.Set != store.SetActive || snap.Record.Attempt != 1 || snap.Record.Claim != r.Claim {
			t.Errorf("Get after claim = %+v", snap)
		}
	})
}

func TestClaimCorruptRecords(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("good-1", "1"), job("good-2", "2"))
		// Not a record at all: the script moves it to dead itself.
		do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue("garbage", "garbage;bytes").Build())
		do(t, c, c.B().Zadd().Key(k.Due).ScoreMember().ScoreMember(0, "garbage").Build())
		// A header that does not decode: the script moves it to dead too.
		do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue("bad-header", "c3;x;y").Build())
		do(t, c, c.B().Zadd().Key(k.Due).ScoreMember().ScoreMember(0, "bad-header").Build())
		// Begins as a fresh record does, which is all the script reads of
		// it, but does not decode in Go.
		do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue("half", "c3;0;0;y").Build())
		do(t, c, c.B().Zadd().Key(k.Due).ScoreMember().ScoreMember(0, "half").Build())
		// In due without a record: dropped.
		do(t, c, c.B().Zadd().Key(k.Due).ScoreMember().ScoreMember(0, "ghost").Build())

		before := testkit.RedisNow(t, c)
		got, err := s.Claim(t.Context(), queue, 10, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		after := testkit.RedisNow(t, c)
		if ids := ids(got.Jobs); !slices.Equal(ids, []string{"good-1", "good-2"}) {
			t.Errorf("claimed %v, want the good jobs", ids)
		}
		if got.Corrupt != 2 {
			t.Errorf("Corrupt = %d, want 2", got.Corrupt)
		}

		for id, bytes := range map[string]string{"garbage": "garbage;bytes", "bad-header": "c3;x;y"} {
			snap := get(t, s, id)
			if snap.Set != store.SetDead || !strings.Contains(snap.Record.LastError, "decode") ||
				string(snap.Record.Payload) != bytes {
				t.Errorf("corrupt job %s = %+v (payload %q), want dead with a decode error and the original bytes", id, snap, snap.Record.Payload)
			}
			inRange(t, "time of death", snap.Score.UnixMilli(), before, after)
		}

		tok := got.Jobs[0].Claim
		if len(got.Bad) != 1 || got.Bad[0].Token != (store.Token{ID: "half", Claim: tok}) || !errors.Is(got.Bad[0].Err, store.ErrCorrupt) {
			t.Fatalf("Bad = %+v, want half under claim %d with ErrCorrupt", got.Bad, tok)
		}
		// The caller kills a bad record; its bytes stay as they were, and
		// reading the job reports them corrupt.
		if ok, err := s.Kill(t.Context(), queue, got.Bad[0].Token, "cannot decode"); !ok || err != nil {
			t.Fatalf("Kill(half) = %v, %v", ok, err)
		}
		if snap, err := s.Get(t.Context(), queue, "half"); snap.Set != store.SetDead || !errors.Is(err, store.ErrCorrupt) {
			t.Errorf("half after Kill = %+v, %v; want dead and ErrCorrupt", snap, err)
		}
		if rec, _ := testkit.HGet(t, c, k.Jobs, "half"); rec != "c3;0;0;y" {
			t.Errorf("half's record after Kill = %q, want its bytes unchanged", rec)
		}

		st := state(t, c, k)
		if _, ok := st.Due["ghost"]; ok {
			t.Error("ghost is still in due")
		}
		if _, ok := st.Active["ghost"]; ok {
			t.Error("ghost went to active")
		}
		if _, ok := st.Claims["ghost"]; ok {
			t.Error("ghost got a claim count")
		}
		if _, err := s.Get(t.Context(), queue, "ghost"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(ghost) = %v, want ErrNotFound", err)
		}
	})
}

func TestClaimLimits(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		jobs := make([]store.NewJob, 1200)
		for i := range jobs {
			jobs[i] = job(string(rune('a'+i%26))+strings.Repeat("x", i/26), "")
		}
		enqueue(t, s, jobs...)
		// n above MaxBatch is capped, not refused.
		if got := claim(t, s, 5000, time.Hour); len(got.Jobs) != store.MaxBatch {
			t.Errorf("Claim(5000) took %d jobs, want %d", len(got.Jobs), store.MaxBatch)
		}
		before := state(t, c, k)
		for _, n := range []int{0, -1} {
			if _, err := s.Claim(t.Context(), queue, n, time.Hour); err == nil {
				t.Errorf("Claim(n=%d) succeeded, want an error", n)
			}
		}
		if _, err := s.Claim(t.Context(), queue, 1, time.Microsecond); err == nil {
			t.Error("Claim with a lease under 1ms succeeded, want an error")
		}
		unchanged(t, c, k, before)
	})
}
