package lock_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// scriptBatches wraps a rueidis.Client and records the size of every
// DoMulti that runs scripts by EVALSHA: the watchdog's renewal rounds. The
// EVAL a round resends to a node that had not cached the script yet is not
// a round of its own: which nodes have it depends on what else ran on the
// cluster before (the lock contract test, a shared REDIS_CLUSTER_ADDRS).
type scriptBatches struct {
	rueidis.Client
	mu    sync.Mutex
	sizes []int
}

func (s *scriptBatches) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	n := 0
	for _, c := range cmds { // read before sending: rueidis recycles commands
		if c.Commands()[0] == "EVALSHA" {
			n++
		}
	}
	if n > 0 {
		s.mu.Lock()
		s.sizes = append(s.sizes, n)
		s.mu.Unlock()
	}
	return s.Client.DoMulti(ctx, cmds...)
}

func (s *scriptBatches) batches() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.sizes)
}

func TestClusterLocksInManySlotsRenewedInOneBatch(t *testing.T) {
	t.Parallel()
	rdb := &scriptBatches{Client: testkit.Cluster(t)}
	const lease = 300 * time.Millisecond
	c := newClient(t, rdb, lock.Options{Lease: lease})
	prefix := testkit.Prefix(t)

	var names []string
	slots := make(map[int64]bool)
	for i := range 8 {
		name := fmt.Sprintf("%s:%d", prefix, i)
		slot, err := rdb.Do(t.Context(), rdb.B().ClusterKeyslot().Key(name).Build()).AsInt64()
		if err != nil {
			t.Fatalf("CLUSTER KEYSLOT: %v", err)
		}
		slots[slot] = true
		names = append(names, name)
	}
	if len(slots) < 3 {
		t.Fatalf("names in %d slots, want several", len(slots))
	}

	var held []*lock.Held
	for _, name := range names {
		held = append(held, acquire(t, c, name, "h", lock.AcquireOptions{}))
	}
	held = append(held, acquire(t, c, names[0], "h", lock.AcquireOptions{})) // re-entered: no extra renewal
	// Rounds sent while the locks were being taken carry fewer of them:
	// look at the rounds from here, past one the watchdog may have put
	// together just before the last lock was held.
	from := len(rdb.batches()) + 1
	select {
	case <-held[0].Context().Done():
		t.Fatalf("hold ended: %v", context.Cause(held[0].Context()))
	case <-time.After(4 * lease):
	}
	for i, name := range names {
		want := "1"
		if i == 0 {
			want = "2"
		}
		if got := testkit.HGetAll(t, rdb, name); got[c.Field("h")] != want {
			t.Errorf("%s: HGETALL = %v after %v, want the hold (%s) kept", name, got, 4*lease, want)
		}
	}
	batches := rdb.batches()
	batches = batches[min(from, len(batches)):]
	t.Logf("%d locks in %d slots: renewal batches %v", len(names), len(slots), batches)
	if len(batches) < 3 {
		t.Errorf("%d renewal rounds in %v, want one per %v", len(batches), 4*lease, lease/3)
	}
	for _, n := range batches {
		if n != len(names) {
			t.Errorf("a renewal round of %d scripts, want all %d locks in one DoMulti", n, len(names))
		}
	}

	// A waiter on the cluster is woken by the unlock message.
	waiter := newClient(t, testkit.Cluster(t), lock.Options{})
	done := make(chan error, 1)
	go func() {
		h, err := waiter.Acquire(t.Context(), names[1], "w", lock.AcquireOptions{Wait: 20 * time.Second})
		if err == nil {
			err = h.Release(t.Context())
		}
		done <- err
	}()
	testkit.Eventually(t, 10*time.Second, "the waiter's subscription", func() bool {
		return testkit.Subscribers(t, rdb, lock.Channel(names[1])) >= 1
	})
	start := time.Now()
	for _, h := range held {
		release(t, h)
	}
	if err := <-done; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	t.Logf("cluster waiter acquired %v after the releases began", time.Since(start))
	for _, name := range names {
		if testkit.Exists(t, rdb, name) {
			t.Errorf("%s left after the releases", name)
		}
	}
}
