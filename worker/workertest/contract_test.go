package workertest_test

import (
	"testing"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
	"github.com/seed-53d105c9/courier/worker/workertest"
)

// embeddedBackend is the store on NewRedis's embedded store, as the
// contract drives it.
type embeddedBackend struct {
	*store.Store
	c rueidis.Client
}

// Lead makes the test the queue's leader: the leader lock's hash holds
// the field the fenced scripts check.
func (b embeddedBackend) Lead(t *testing.T, queue string) string {
	const field = "test-client-uuid:leader"
	if err := b.c.Do(t.Context(), b.c.B().Hset().Key(b.Keys(queue).Leader).FieldValue().FieldValue(field, "1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	return field
}

// Checkpoint copies every key of queue; rolling back restores them (and
// deletes those that did not exist), as Redis does when it loses the
// writes made since. The embedded store's DUMP handles strings only, so
// the copy is by type: strings, hashes and sorted sets.
func (b embeddedBackend) Checkpoint(t *testing.T, queue string) func() {
	k := b.Keys(queue)
	keys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Periodic, k.Completed, k.Results}
	restore := make([]rueidis.Completed, 0, len(keys))
	for _, key := range keys {
		restore = append(restore, b.c.B().Del().Key(key).Build())
		typ, err := b.c.Do(t.Context(), b.c.B().Type().Key(key).Build()).ToString()
		if err != nil {
			t.Fatalf("TYPE %s: %v", key, err)
		}
		switch typ {
		case "none":
		case "string":
			v, err := b.c.Do(t.Context(), b.c.B().Get().Key(key).Build()).ToString()
			if err != nil {
				t.Fatalf("GET %s: %v", key, err)
			}
			restore = append(restore, b.c.B().Set().Key(key).Value(v).Build())
		case "hash":
			m, err := b.c.Do(t.Context(), b.c.B().Hgetall().Key(key).Build()).AsStrMap()
			if err != nil {
				t.Fatalf("HGETALL %s: %v", key, err)
			}
			cmd := b.c.B().Hset().Key(key).FieldValue()
			for f, v := range m {
				cmd = cmd.FieldValue(f, v)
			}
			restore = append(restore, cmd.Build())
		case "zset":
			zs, err := b.c.Do(t.Context(), b.c.B().Zrange().Key(key).Min("0").Max("-1").Withscores().Build()).AsZScores()
			if err != nil {
				t.Fatalf("ZRANGE %s: %v", key, err)
			}
			cmd := b.c.B().Zadd().Key(key).ScoreMember()
			for _, z := range zs {
				cmd = cmd.ScoreMember(z.Score, z.Member)
			}
			restore = append(restore, cmd.Build())
		default:
			t.Fatalf("checkpoint: key %s is a %s", key, typ)
		}
	}
	return func() {
		for _, resp := range b.c.DoMulti(t.Context(), restore...) {
			if err := resp.Error(); err != nil {
				t.Fatalf("roll back: %v", err)
			}
		}
	}
}

// TestContract runs the table of cases that holds Courier's in-memory
// fake and its scripts on Redis to the same behaviour against the
// embedded store of NewRedis: users' tests on it see what the scripts do
// on Redis.
func TestContract(t *testing.T) {
	t.Parallel()
	storetest.RunContract(t, func(t *testing.T) storetest.Backend {
		c := workertest.NewRedis(t)
		return embeddedBackend{store.New(c, "courier", nil), c}
	})
}
