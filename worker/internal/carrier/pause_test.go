package carrier

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestPartitionedLeaderStepsDownFirst: the leader's connection to Redis
// stalls (a proxy stops forwarding). It must step down by itself before its
// lock's lease ends in Redis, so it is no longer leading when the follower
// acquires the lock; and its fenced duty calls change nothing afterwards.
func TestPartitionedLeaderStepsDownFirst(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	proxy, viaProxy := testkit.StartProxyClient(t, testkit.SingleAddr(t))

	queues := []Queue{{Name: testQueue, MaxAttempts: 3}}
	type event struct {
		node    string
		leading bool
		at      time.Time
	}
	var mu sync.Mutex
	var events []event
	record := func(name string) Config {
		return Config{RecoverInterval: 50 * time.Millisecond, OnLeader: func(q string, on bool) {
			if q == testQueue {
				mu.Lock()
				events = append(events, event{name, on, time.Now()})
				mu.Unlock()
			}
		}}
	}
	a := startNodeOn(t, viaProxy, prefix, "a", queues, record("a"))
	if !a.nextEvent(t, 10*time.Second) {
		t.Fatal("a did not lead")
	}
	b := startNode(t, prefix, "b", queues, record("b"))
	a.quiet(t, 2*testLease) // a keeps the lead while its renewals get through

	paused := time.Now()
	proxy.Stall()
	if a.nextEvent(t, 5*time.Second) {
		t.Fatal("a: leadership event true while partitioned")
	}
	if !b.nextEvent(t, 5*time.Second) {
		t.Fatal("b did not take over")
	}
	// The node's event channel hears of a change just before the recording
	// hook does: wait for the record.
	var aDown, bUp time.Time
	testkit.Eventually(t, 5*time.Second, "both changes recorded", func() bool {
		mu.Lock()
		defer mu.Unlock()
		aDown, bUp = time.Time{}, time.Time{}
		for _, e := range events {
			if e.node == "a" && !e.leading && aDown.IsZero() && e.at.After(paused) {
				aDown = e.at
			}
			if e.node == "b" && e.leading && bUp.IsZero() {
				bUp = e.at
			}
		}
		return !aDown.IsZero() && !bUp.IsZero()
	})
	t.Logf("partition at 0: a stepped down at +%v, b led at +%v (lease %v)",
		aDown.Sub(paused).Round(time.Millisecond), bUp.Sub(paused).Round(time.Millisecond), testLease)
	if !aDown.Before(bUp) {
		t.Errorf("a stepped down at %v, after b led at %v: two leaders at once", aDown, bUp)
	}
	if aDown.Sub(paused) > testLease {
		t.Errorf("a stepped down %v after the partition, later than the lease %v", aDown.Sub(paused), testLease)
	}

	// Once the partition heals, whatever a sends as its old self changes
	// nothing: the fenced scripts refuse its field.
	proxy.Resume()
	_, err := a.st.Recover(t.Context(), testQueue, a.field(), 10, 3)
	if !errors.Is(err, store.ErrNotLeader) {
		t.Errorf("a's recover after the partition: %v, want ErrNotLeader", err)
	}
	if !b.c.Leading(testQueue) {
		t.Error("b lost the lead when the partition healed")
	}
}
