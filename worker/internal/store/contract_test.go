package store_test

import (
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

var _ storetest.Scripts = (*store.Store)(nil)

// contractBackend is the real store as storetest's contract drives it.
type contractBackend struct {
	*store.Store
	c rueidis.Client
}

// Lead makes the test the queue's leader (see leaderField).
func (b contractBackend) Lead(t *testing.T, queue string) string {
	return leaderField(t, b.Store, b.c, queue)
}

// TestContract runs the contract that storetest.Fake passes against the
// scripts on single Redis and Redis Cluster, a key prefix per case.
func TestContract(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *store.Store, c rueidis.Client) {
		storetest.RunContract(t, func(t *testing.T) storetest.Backend {
			return contractBackend{store.New(c, testkit.Prefix(t), nil), c}
		})
	})
}
