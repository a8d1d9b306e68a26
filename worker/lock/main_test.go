package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// newClient returns a lock Client on rdb, closed at cleanup.
func newClient(t testing.TB, rdb rueidis.Client, opts lock.Options) *lock.Client {
	t.Helper()
	c, err := lock.NewClient(rdb, opts)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func acquire(t testing.TB, c *lock.Client, name, holder string, o lock.AcquireOptions) *lock.Held {
	t.Helper()
	h, err := c.Acquire(t.Context(), name, holder, o)
	if err != nil {
		t.Fatalf("Acquire(%s, %s): %v", name, holder, err)
	}
	return h
}

func release(t testing.TB, h *lock.Held) {
	t.Helper()
	if err := h.Release(t.Context()); err != nil {
		t.Fatalf("Release(%s): %v", h.Name(), err)
	}
}

func hgetall(t testing.TB, rdb rueidis.Client, key string) map[string]string {
	t.Helper()
	m, err := rdb.Do(t.Context(), rdb.B().Hgetall().Key(key).Build()).AsStrMap()
	if err != nil {
		t.Fatalf("HGETALL %s: %v", key, err)
	}
	return m
}

func pttl(t testing.TB, rdb rueidis.Client, key string) time.Duration {
	t.Helper()
	n, err := rdb.Do(t.Context(), rdb.B().Pttl().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatalf("PTTL %s: %v", key, err)
	}
	return time.Duration(n) * time.Millisecond
}

func exists(t testing.TB, rdb rueidis.Client, key string) bool {
	t.Helper()
	n, err := rdb.Do(t.Context(), rdb.B().Exists().Key(key).Build()).AsInt64()
	if err != nil {
		t.Fatalf("EXISTS %s: %v", key, err)
	}
	return n == 1
}

func del(t testing.TB, rdb rueidis.Client, key string) {
	t.Helper()
	if err := rdb.Do(t.Context(), rdb.B().Del().Key(key).Build()).Error(); err != nil {
		t.Fatalf("DEL %s: %v", key, err)
	}
}

// waitFor polls cond every few milliseconds until it holds or timeout
// passes.
func waitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		<-tick.C
	}
}

// ended waits up to timeout for h's hold to end and returns how long that
// took from start, and the cause.
func ended(t testing.TB, h *lock.Held, start time.Time, timeout time.Duration) (time.Duration, error) {
	t.Helper()
	select {
	case <-h.Context().Done():
		return time.Since(start), context.Cause(h.Context())
	case <-time.After(timeout):
		t.Fatalf("hold of %s still live after %v", h.Name(), timeout)
		return 0, nil
	}
}

// metricValue returns the value of the counter, or the sample count of
// the histogram, name with exactly the given labels; 0 when absent.
func metricValue(t testing.TB, reg prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if !labelsEqual(m.GetLabel(), labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.Counter.GetValue()
			case m.Histogram != nil:
				return float64(m.Histogram.GetSampleCount())
			}
		}
	}
	return 0
}

func labelsEqual(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if want[l.GetName()] != l.GetValue() {
			return false
		}
	}
	return true
}

func isNotAcquired(err error) bool { return errors.Is(err, lock.ErrNotAcquired) }
