package workertest

import (
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
)

// NewRedis starts an in-memory Redis of the test's own (miniredis, which
// runs Courier's real Lua scripts) and returns a client of it, closed with
// the store at the test's end. Its clock is the real one; New's Store
// has one the test moves. Hand the client to worker.NewClient,
// worker.NewDaemon or admin.NewClient as you would a real Redis's.
//
// The embedded store speaks RESP2 and has neither client-side caching
// nor a Cluster: the client is made for that (no CLIENT TRACKING, one
// connection pool), and the scripts fall back by themselves from what it
// lacks (script flags, sharded pub/sub).
func NewRedis(t testing.TB) rueidis.Client {
	t.Helper()
	rdb, _ := start(t)
	return rdb
}

// start starts an embedded store and connects to it.
func start(t testing.TB) (rueidis.Client, *miniredis.Miniredis) {
	t.Helper()
	m := miniredis.RunT(t)
	rdb, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{m.Addr()},
		// miniredis has no CLIENT TRACKING (client-side caching), speaks
		// RESP3 only in part, and answers CLUSTER SLOTS as a one-node
		// cluster: the client must not try any of them.
		DisableCache:      true,
		AlwaysRESP2:       true,
		ForceSingleClient: true,
	})
	if err != nil {
		t.Fatalf("workertest: connect to the embedded store: %v", err)
	}
	t.Cleanup(rdb.Close)
	return rdb, m
}
