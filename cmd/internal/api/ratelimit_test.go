package api

import (
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	l := newLimiter[string](worker.RateLimit{N: 100, Per: time.Second}, maxKeys)
	t0 := time.Unix(0, 0)
	for i := range 99 {
		if spent, w := l.take("a", t0); !spent || w != 0 {
			t.Fatalf("request %d: spent %t, wait %s", i, spent, w)
		}
	}
	// The last unit is spent, and the wait until the next one told.
	if spent, w := l.take("a", t0); !spent || w != 10*time.Millisecond {
		t.Errorf("last unit: spent %t, wait %s; want spent, 10ms", spent, w)
	}
	if spent, w := l.take("a", t0); spent || w != 10*time.Millisecond {
		t.Errorf("empty bucket: spent %t, wait %s; want refused, 10ms", spent, w)
	}
	if w := l.wait("a", t0.Add(4*time.Millisecond)); w != 6*time.Millisecond {
		t.Errorf("wait %s, want 6ms", w)
	}
	if spent, _ := l.take("a", t0.Add(10*time.Millisecond)); !spent {
		t.Errorf("refused after the refill")
	}
	// A clock that steps back refills nothing and breaks nothing.
	if spent, _ := l.take("a", t0); spent {
		t.Errorf("a request was allowed from an empty bucket")
	}
}

// TestLimiterBounded: the table of buckets never holds more than its cap,
// whatever the number of keys; at the cap the key spent longest ago is
// forgotten, and buckets that have refilled are dropped.
func TestLimiterBounded(t *testing.T) {
	t.Parallel()
	l := newLimiter[int](worker.RateLimit{N: 2, Per: time.Minute}, 100)
	t0 := time.Unix(0, 0)
	for key := range 1000 {
		l.take(key, t0)
		l.take(key, t0)
		if n := l.size(); n > 100 {
			t.Fatalf("%d buckets after %d keys; the cap is 100", n, key+1)
		}
	}
	if l.wait(999, t0) == 0 || l.wait(900, t0) == 0 {
		t.Error("the newest keys were forgotten")
	}
	if l.wait(0, t0) != 0 || l.wait(899, t0) != 0 {
		t.Error("the oldest keys are remembered beyond the cap")
	}
	// Spending a key again makes it the newest: the next key evicts 901.
	l.take(900, t0.Add(30*time.Second))
	l.take(1000, t0.Add(30*time.Second))
	if l.wait(900, t0.Add(30*time.Second)) == 0 || l.wait(901, t0.Add(30*time.Second)) != 0 {
		t.Error("eviction did not take the bucket spent longest ago")
	}
	// A minute refills those spent at t0; the next call drops them. It
	// stops at 900, not full yet; 1000, full but spent after it, waits
	// its turn.
	l.take(2000, t0.Add(time.Minute))
	if n := l.size(); n != 3 {
		t.Errorf("%d buckets after the refill, want 3 (900, 1000, 2000)", n)
	}
}

// size is how many buckets the limiter holds.
func (l *limiter[K]) size() int {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return len(l.buckets)
}
