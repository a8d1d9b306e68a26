package limiter_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/limiter"
)

// TestTakeIsExactAcrossProcesses: twenty takes race from two processes
// for a window of five: exactly five are taken, and each refusal says
// when the window frees. Wait, from either process, takes once the first
// take has left the window, not before and not much later.
func TestTakeIsExactAcrossProcesses(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, connect func(testing.TB) rueidis.Client) {
		rdb := connect(t)
		prefix := testkit.Prefix(t)
		rateKey := prefix + ":{limiter:api}:rate"
		const n, per = 5, 2 * time.Second
		procs := []*limiter.Limiter{
			newLimiter(t, rdb, limiter.Options{Prefix: prefix}),
			newLimiter(t, connect(t), limiter.Options{Prefix: prefix}),
		}
		var taken, refused atomic.Int64
		var wg sync.WaitGroup
		start := time.Now()
		for i := range 20 {
			wg.Go(func() {
				ok, at, err := procs[i%2].Take(t.Context(), "api", n, per)
				switch {
				case err != nil:
					t.Errorf("Take: %v", err)
				case ok:
					taken.Add(1)
				default:
					refused.Add(1)
					if d := at.Sub(start); d <= 0 || d > per+time.Second {
						t.Errorf("a refusal says the window frees %v after the first take, want within %v", d, per)
					}
				}
			})
		}
		wg.Wait()
		if taken.Load() != n || refused.Load() != 20-n {
			t.Fatalf("%d taken, %d refused; want exactly %d taken", taken.Load(), refused.Load(), n)
		}
		if ttl := testkit.PTTL(t, rdb, rateKey); ttl <= 0 || ttl > per+time.Millisecond {
			t.Errorf("the rate key's PTTL is %v, want at most the window %v (+1ms, rounded up)", ttl, per)
		}

		first := scores(t, rdb, rateKey)[0]
		if err := procs[1].Wait(t.Context(), "api", n, per); err != nil {
			t.Fatal(err)
		}
		s := scores(t, rdb, rateKey)
		last := s[len(s)-1]
		if late := time.Duration(last-first)*time.Microsecond - per; late < 0 || late > time.Second {
			t.Errorf("Wait took %v after the first take, want just over the window %v", time.Duration(last-first)*time.Microsecond, per)
		}
	})
}

// scores returns the scores of the rate zset key, oldest first (µs).
func scores(t testing.TB, rdb rueidis.Client, key string) []int64 {
	t.Helper()
	zs, err := rdb.Do(t.Context(), rdb.B().Zrange().Key(key).Min("0").Max("-1").Withscores().Build()).AsZScores()
	if err != nil || len(zs) == 0 {
		t.Fatalf("ZRANGE %s: %v, %v", key, zs, err)
	}
	out := make([]int64, len(zs))
	for i, z := range zs {
		out[i] = int64(z.Score)
	}
	return out
}

// TestTakeNTakesAllOrNone: TakeN takes k units or none, and WaitN waits
// until k fit.
func TestTakeNTakesAllOrNone(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, connect func(testing.TB) rueidis.Client) {
		l := newLimiter(t, connect(t), limiter.Options{Prefix: testkit.Prefix(t)})
		const n, per = 10, 500 * time.Millisecond
		if ok, _, err := l.TakeN(t.Context(), "api", n, per, 7); !ok || err != nil {
			t.Fatalf("TakeN(7 of 10) = %v, %v", ok, err)
		}
		ok, at, err := l.TakeN(t.Context(), "api", n, per, 4)
		if ok || err != nil || time.Until(at) <= 0 {
			t.Fatalf("TakeN(4) with 3 left = %v, in %v, %v; want refused", ok, time.Until(at), err)
		}
		if ok, _, err := l.TakeN(t.Context(), "api", n, per, 3); !ok || err != nil {
			t.Fatalf("TakeN(3) with 3 left = %v, %v; want taken (the refused 4 took nothing)", ok, err)
		}
		start := time.Now()
		if err := l.WaitN(t.Context(), "api", n, per, 10); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < per/2 {
			t.Errorf("WaitN(10) returned after %v, want about %v (both takes had to leave)", d, per)
		}
	})
}

// TestKeysExpireWhenUnused: a limit that is no longer used leaves nothing
// in Redis: the slots key expires with its last lease, the rate key a
// window after its last take.
func TestKeysExpireWhenUnused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, connect func(testing.TB) rueidis.Client) {
		rdb := connect(t)
		prefix := testkit.Prefix(t)
		l := newLimiter(t, connect(t), limiter.Options{Prefix: prefix})
		if _, err := l.Acquire(t.Context(), "api", 2, 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.Take(t.Context(), "api", 2, 200*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		// rate.lua rounds the window's expiry up by 1ms.
		for _, key := range []string{slotsKey(prefix, "api"), prefix + ":{limiter:api}:rate"} {
			if ttl := testkit.PTTL(t, rdb, key); ttl <= 0 || ttl > 201*time.Millisecond {
				t.Errorf("PTTL %s = %v, want (0, 201ms]", key, ttl)
			}
		}
		l.Close() // the slot is never released
		testkit.Eventually(t, 5*time.Second, "both keys to expire", func() bool {
			return !testkit.Exists(t, rdb, slotsKey(prefix, "api")) && !testkit.Exists(t, rdb, prefix+":{limiter:api}:rate")
		})
	})
}
