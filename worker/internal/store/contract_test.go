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

// Checkpoint dumps every key of queue; rolling back restores them (and
// deletes those that did not exist), as Redis does when it loses the writes
// made since: DUMP and RESTORE stand in for SAVE and DEBUG RELOAD on the
// shared servers. See TestClaimTokensSurviveRollback for the real thing.
func (b contractBackend) Checkpoint(t *testing.T, queue string) func() {
	k := b.Keys(queue)
	keys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Periodic, k.Completed, k.Results}
	dumps := make([]string, len(keys))
	exists := make([]bool, len(keys))
	for i, key := range keys {
		v, err := b.c.Do(t.Context(), b.c.B().Dump().Key(key).Build()).ToString()
		switch {
		case rueidis.IsRedisNil(err):
		case err != nil:
			t.Fatalf("DUMP %s: %v", key, err)
		default:
			dumps[i], exists[i] = v, true
		}
	}
	return func() {
		for i, key := range keys {
			cmd := b.c.B().Del().Key(key).Build()
			if exists[i] {
				cmd = b.c.B().Restore().Key(key).Ttl(0).SerializedValue(dumps[i]).Replace().Build()
			}
			do(t, b.c, cmd)
		}
	}
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
