package script

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// TestRetryingBacksOff checks the waits between resends on a fake clock:
// 10 ms, doubling, at most 250 ms, until a round has nothing left to send.
func TestRetryingBacksOff(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		var at []time.Duration
		retrying(t.Context(), func() bool {
			at = append(at, time.Since(start))
			return len(at) < 9
		})
		var gaps []time.Duration
		for i := 1; i < len(at); i++ {
			gaps = append(gaps, at[i]-at[i-1])
		}
		ms := time.Millisecond
		if want := []time.Duration{10 * ms, 20 * ms, 40 * ms, 80 * ms, 160 * ms, 250 * ms, 250 * ms, 250 * ms}; !slices.Equal(gaps, want) {
			t.Errorf("waits between rounds %v, want %v", gaps, want)
		}
	})
}

// TestRetryingEndsWithTheContext: a call refused for good is sent until
// its context ends, and no round starts after that.
func TestRetryingEndsWithTheContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		start := time.Now()
		rounds := 0
		retrying(ctx, func() bool {
			rounds++
			return true
		})
		// Rounds at 0, 10, 30, 70, 150, 310, 560, 810 ms; the wait after the
		// last one is cut short at 1 s.
		if took := time.Since(start); took != time.Second || rounds != 8 {
			t.Errorf("returned after %s and %d rounds, want 1s and 8", took, rounds)
		}
	})
}

func TestBackoffNeverOverflows(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 5, 62, 63, 64, 1 << 20} {
		if d := backoff(n); d < retryFirst || d > retryMax {
			t.Errorf("backoff(%d) = %s, want within [%s, %s]", n, d, retryFirst, retryMax)
		}
	}
}
