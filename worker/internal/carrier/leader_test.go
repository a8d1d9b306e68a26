package carrier

import (
	"maps"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// TestHandOverAfterLocalExpiry: the leader's connection stalls until its
// hold ends here (its renewals are unconfirmed for the lease minus the
// margin) while the lock is renewed in Redis, as renewals whose replies
// are lost renew it: Redis counts a hold the leader no longer has. The leader leads
// again. Redis must count its new term once, not twice, and when the
// leader stops, as at SIGTERM, the waiting follower must be woken by the
// unlock message and lead at once, long before the lease.
func TestHandOverAfterLocalExpiry(t *testing.T) {
	t.Parallel()
	const lease = 3 * time.Second // renewals every 1s, margin 300ms
	prefix := testkit.Prefix(t)
	rdb := testkit.Single(t)
	proxy, viaProxy := testkit.StartProxyClient(t, testkit.SingleAddr(t))
	queues := []Queue{{Name: testQueue, MaxAttempts: 3}}

	a := startNodeLease(t, viaProxy, prefix, "a", queues, Config{}, lease)
	if !a.nextEvent(t, 10*time.Second) {
		t.Fatal("a: first event is a loss")
	}
	key := a.st.Keys(testQueue).Leader

	proxy.Stall()
	stop := testkit.KeepTTL(t, rdb, key, lease)
	if a.nextEvent(t, 2*lease) {
		t.Fatal("a: gained the lead while its connection stalled")
	}
	counted, ok := testkit.HGet(t, rdb, key, a.field())
	stop()
	proxy.Resume()
	if !ok || counted != "1" {
		t.Fatalf("when a stepped down, Redis counted %q (present %v), want 1", counted, ok)
	}
	if !a.nextEvent(t, 10*time.Second) {
		t.Fatal("a: lost the lead twice")
	}
	if got, want := leaderHash(t, a), map[string]string{a.field(): "1"}; !maps.Equal(got, want) {
		t.Errorf("a leads again: leader hash = %v, want %v (one hold, none stale under it)", got, want)
	}

	b := startNodeLease(t, testkit.Single(t), prefix, "b", queues, Config{}, lease)
	testkit.Eventually(t, 10*time.Second, "b to wait on the unlock channel", func() bool {
		return testkit.Subscribers(t, rdb, lock.Channel(key)) >= 1
	})
	start := time.Now()
	a.cancel() // as SIGTERM does
	if !b.nextEvent(t, 2*lease) {
		t.Fatal("b: first event is a loss")
	}
	took := time.Since(start)
	t.Logf("a stopped: b led %v later (lease %v)", took, lease)
	if took > lease/3 {
		t.Errorf("b led %v after a stopped, want at once (woken by the unlock message), long before the %v lease", took, lease)
	}
	a.stop(t)
	if got, want := leaderHash(t, b), map[string]string{b.field(): "1"}; !maps.Equal(got, want) {
		t.Errorf("b leads: leader hash = %v, want %v", got, want)
	}
}
