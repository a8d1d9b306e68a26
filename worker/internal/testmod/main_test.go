package testmod_test

import (
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/workertest"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// embedded returns a client of an embedded store of the test's own, as
// courier dev runs it (miniredis: no script flags, no sharded pub/sub),
// closed at the test's end: the public test kit's.
func embedded(t testing.TB) rueidis.Client {
	t.Helper()
	return workertest.NewRedis(t)
}
