package lock_test

import (
	"context"
	"errors"
	"testing"
	"time"

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

func isNotAcquired(err error) bool { return errors.Is(err, lock.ErrNotAcquired) }
