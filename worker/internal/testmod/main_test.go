package testmod_test

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// embedded returns a client of an embedded store of the test's own, as
// courier dev runs it (miniredis: no script flags, no sharded pub/sub),
// closed at the test's end.
func embedded(t testing.TB) rueidis.Client {
	t.Helper()
	m := miniredis.RunT(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{m.Addr()}, DisableCache: true, AlwaysRESP2: true, ForceSingleClient: true,
	})
	if err != nil {
		t.Fatalf("connect to the embedded store: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}
