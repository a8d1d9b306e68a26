package store_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// claimLimited claims up to n jobs of queue within limit and fails on an
// error or a bad record.
func claimLimited(t *testing.T, s *store.Store, n int, limit store.Rate) store.Claimed {
	t.Helper()
	c, err := s.ClaimLimited(t.Context(), queue, n, time.Hour, limit)
	if err != nil {
		t.Fatalf("ClaimLimited: %v", err)
	}
	if len(c.Bad) > 0 {
		t.Fatalf("ClaimLimited: bad records %v", c.Bad)
	}
	return c
}

// ceilMs rounds t up to whole milliseconds, as the script reports times.
func ceilMs(t time.Time) time.Time {
	ms := t.Truncate(time.Millisecond)
	if ms.Before(t) {
		ms = ms.Add(time.Millisecond)
	}
	return ms
}

// claimEvent is one claim call as the script reported it.
type claimEvent struct {
	At   time.Time // the Redis clock when it ran (µs)
	Jobs int
}

// maxInWindow returns the most jobs claimed in one window [t, t+d).
func maxInWindow(events []claimEvent, d time.Duration) int {
	sorted := slices.SortedFunc(slices.Values(events), func(a, b claimEvent) int { return a.At.Compare(b.At) })
	most, sum, j := 0, 0, 0
	for i := range sorted {
		for j < len(sorted) && sorted[j].At.Before(sorted[i].At.Add(d)) {
			sum += sorted[j].Jobs
			j++
		}
		most = max(most, sum)
		sum -= sorted[i].Jobs
	}
	return most
}

// TestClaimRateLimitEveryWindow: three claimers asking for random batches
// as fast as the limit lets them take, together, at most N jobs in every
// window of D (each window [t, t+D) starting at a claim, on the Redis clock
// the script reports): the window slides, it is not fixed buckets.
func TestClaimRateLimitEveryWindow(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		const jobs = 60
		limit := store.Rate{N: 7, Per: 250 * time.Millisecond}
		batch := make([]store.NewJob, jobs)
		for i := range batch {
			batch[i] = job(fmt.Sprintf("j%02d", i), "")
		}
		enqueue(t, s, batch...)

		var mu sync.Mutex
		var events []claimEvent
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for {
					got, err := s.ClaimLimited(t.Context(), queue, 1+rng.IntN(4), time.Hour, limit)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if len(got.Jobs) > 0 {
						events = append(events, claimEvent{At: got.Now, Jobs: len(got.Jobs)})
					}
					mu.Unlock()
					switch {
					case got.Next.IsZero():
						return // every job is claimed
					case got.Limited:
						// Come back a little before the window frees, to
						// race the other claimers for it.
						time.Sleep(time.Until(got.Next) - 5*time.Millisecond) //nolint:forbidigo // the contention under test, not a wait for a condition
					}
				}
			})
		}
		wg.Wait()
		claimed := 0
		for _, e := range events {
			claimed += e.Jobs
		}
		if claimed != jobs {
			t.Fatalf("claimed %d jobs, want %d", claimed, jobs)
		}
		most := maxInWindow(events, limit.Per)
		if most > limit.N {
			t.Errorf("%d jobs claimed within %v, limit %d", most, limit.Per, limit.N)
		}
		first := slices.MinFunc(events, func(a, b claimEvent) int { return a.At.Compare(b.At) }).At
		last := slices.MaxFunc(events, func(a, b claimEvent) int { return a.At.Compare(b.At) }).At
		// 60 jobs at 7 per window take 8 windows after the first.
		if span, least := last.Sub(first), 8*limit.Per; span < least {
			t.Errorf("claims spanned %v, want at least %v", span, least)
		}
		t.Logf("%d claim calls over %v; at most %d jobs in a window of %v", len(events), last.Sub(first), most, limit.Per)
	})
}

// TestClaimRateLimitNext: what a claim reports when the limit is used up,
// and that the window frees capacity at the time it reported.
func TestClaimRateLimitNext(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		limit := store.Rate{N: 3, Per: 400 * time.Millisecond}
		enqueue(t, s, job("a", ""), job("b", ""), job("c", ""), job("d", ""), job("e", ""))

		first := claimLimited(t, s, 2, limit)
		if len(first.Jobs) != 2 || first.Limited || first.Next.After(first.Now) {
			t.Fatalf("first claim: %d jobs, limited %v, next %v (now %v); want 2 jobs, not limited, next due now",
				len(first.Jobs), first.Limited, first.Next, first.Now)
		}
		second := claimLimited(t, s, 10, limit)
		// Capacity frees when the first claim leaves the window.
		free := ceilMs(first.Now).Add(limit.Per)
		if len(second.Jobs) != 1 || !second.Limited || !second.Next.Equal(free) {
			t.Fatalf("second claim: %d jobs, limited %v, next %v; want 1 job, limited until %v",
				len(second.Jobs), second.Limited, second.Next, free)
		}
		if third := claimLimited(t, s, 10, limit); third.Now.Before(free) &&
			(len(third.Jobs) != 0 || !third.Limited || !third.Next.Equal(free)) {
			t.Errorf("claim before the window frees: %d jobs, limited %v, next %v; want none, limited until %v",
				len(third.Jobs), third.Limited, third.Next, free)
		}
		if ttl := testkit.PTTL(t, c, k.Rate); ttl <= 0 || ttl > limit.Per+2*time.Millisecond {
			t.Errorf("rate key TTL %v, want about %v", ttl, limit.Per)
		}

		testkit.Eventually(t, 5*time.Second, "the rate window to free a slot", func() bool { return !time.UnixMilli(testkit.RedisNow(t, c)).Before(free) })
		fourth := claimLimited(t, s, 10, limit)
		if len(fourth.Jobs) != 2 {
			t.Errorf("claim once the window freed 2: took %d jobs", len(fourth.Jobs))
		}
		if n := zcard(t, c, k.Rate); n > 2 {
			t.Errorf("the rate window holds %d entries, want the 2 claims still in it", n)
		}
		// Idle: the key expires with the window.
		testkit.Eventually(t, 5*time.Second, "the rate key to expire", func() bool { return !testkit.Exists(t, c, k.Rate) })
	})
}

// TestClaimRateLimitHead: a job due after the window frees is reported as
// the head, not as a rate limit; one due before is held back.
func TestClaimRateLimitHead(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		limit := store.Rate{N: 1, Per: 10 * time.Second}
		enqueue(t, s, job("now", ""), store.NewJob{ID: "later", Delay: time.Hour})
		got := claimLimited(t, s, 5, limit)
		if later := mustScore(t, c, k.Due, "later"); len(got.Jobs) != 1 || got.Limited || got.Next.UnixMilli() != later {
			t.Errorf("claim with the head after the window: %d jobs, limited %v, next %v; want 1 job, next = the head %d",
				len(got.Jobs), got.Limited, got.Next.UnixMilli(), later)
		}
		enqueue(t, s, store.NewJob{ID: "soon", Delay: 2 * time.Second})
		again := claimLimited(t, s, 5, limit)
		if free := ceilMs(got.Now).Add(limit.Per); len(again.Jobs) != 0 || !again.Limited || !again.Next.Equal(free) {
			t.Errorf("claim with the head before the window frees: %d jobs, limited %v, next %v; want none, limited until %v",
				len(again.Jobs), again.Limited, again.Next, free)
		}
		if n := zcard(t, c, k.Rate); n != 1 {
			t.Errorf("the rate window holds %d entries, want 1: a claim that took nothing adds none", n)
		}
		// Without a limit the same queue claims at once, and the window is
		// left alone.
		before := state(t, c, k).Rate
		if free := claim(t, s, 5, time.Hour); len(free.Jobs) != 0 {
			t.Errorf("unlimited claim took %v before their run-at", ids(free.Jobs))
		}
		if after := state(t, c, k).Rate; len(after) != len(before) {
			t.Errorf("an unlimited claim changed the rate window: %v, was %v", after, before)
		}
	})
}

// TestClaimRateKeyNotOurs: a rate key that is not a rate window stops the
// claim before it writes anything.
func TestClaimRateKeyNotOurs(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("a", ""))
		limit := store.Rate{N: 5, Per: time.Hour}
		do(t, c, c.B().Zadd().Key(k.Rate).ScoreMember().ScoreMember(float64(testkit.RedisNow(t, c)*1000), "garbage").Build())
		before := state(t, c, k)
		if _, err := s.ClaimLimited(t.Context(), queue, 5, time.Hour, limit); err == nil || !strings.Contains(err.Error(), "not a rate entry") {
			t.Errorf("claim with a foreign rate entry: %v, want an error", err)
		}
		unchanged(t, c, k, before)

		do(t, c, c.B().Del().Key(k.Rate).Build())
		do(t, c, c.B().Set().Key(k.Rate).Value("x").Build())
		others := k // state reads the rate key as a zset: leave it out
		others.Rate = k.Rate + "-absent"
		before = state(t, c, others)
		if _, err := s.ClaimLimited(t.Context(), queue, 5, time.Hour, limit); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("claim with a rate key of the wrong type: %v, want WRONGTYPE", err)
		}
		unchanged(t, c, others, before)
		if v, _ := c.Do(t.Context(), c.B().Get().Key(k.Rate).Build()).ToString(); v != "x" {
			t.Errorf("rate key = %q, want it untouched", v)
		}
	})
}

func zcard(t *testing.T, c rueidis.Client, key string) int64 {
	t.Helper()
	n, err := c.Do(t.Context(), c.B().Zcard().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatalf("ZCARD %s: %v", key, err)
	}
	return n
}
