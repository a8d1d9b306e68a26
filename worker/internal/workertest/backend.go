package workertest

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

// Backend is a Redis deployment an integration test runs against.
type Backend struct {
	Name    string                          // the subtest's name
	Connect func(testing.TB) rueidis.Client // a client for the test, closed at its end
}

// Backends are single Redis and Redis Cluster, for a test that runs its
// subtests itself rather than through ForEachBackend.
var Backends = []Backend{
	{"single", testkit.Single},
	{"cluster", testkit.Cluster},
}

// ForEachBackend runs f as parallel subtests "single" and "cluster", each
// with its own Redis client and key prefix.
func ForEachBackend(t *testing.T, f func(t *testing.T, rdb rueidis.Client, prefix string)) {
	t.Helper()
	for _, b := range Backends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			f(t, b.Connect(t), testkit.Prefix(t))
		})
	}
}

// Receive waits up to within for a value on ch; what names the value in the
// failure.
func Receive[T any](t testing.TB, ch <-chan T, within time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(within):
		t.Fatalf("waited %s for %s", within, what)
	}
	panic("unreachable")
}
