package lock_test

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

func TestFixedLeaseExpiresWithoutWatchdog(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	c := newClient(t, rdb, lock.Options{})
	other := newClient(t, testkit.Single(t), lock.Options{})
	name := testkit.Prefix(t)
	const lease = 200 * time.Millisecond

	start := time.Now()
	h := acquire(t, c, name, "a", lock.AcquireOptions{Lease: lease})
	if ttl := testkit.PTTL(t, rdb, name); ttl <= 0 || ttl > lease {
		t.Fatalf("PTTL = %v, want in (0, %v]", ttl, lease)
	}
	at, cause := ended(t, h, start, 5*time.Second)
	if !errors.Is(cause, lock.ErrLockExpired) || at > lease {
		t.Errorf("hold ended after %v with %v, want ErrLockExpired before the lease (%v) ran out", at, cause, lease)
	}
	testkit.Eventually(t, 5*time.Second, "the key to expire", func() bool { return !testkit.Exists(t, rdb, name) })
	gone := time.Since(start)
	t.Logf("fixed lease %v: hold ended after %v, key gone after %v", lease, at, gone)
	if gone < lease-lock.Margin(lease) {
		t.Errorf("key gone after %v, before the lease %v", gone, lease)
	}

	h2 := acquire(t, other, name, "b", lock.AcquireOptions{})
	if err := h.Release(t.Context()); !errors.Is(err, lock.ErrNotHeld) {
		t.Errorf("Release of the expired hold = %v, want ErrNotHeld", err)
	}
	if got, want := testkit.HGetAll(t, rdb, name), map[string]string{other.Field("b"): "1"}; !maps.Equal(got, want) {
		t.Errorf("HGETALL = %v after the expired holder's Release, want the new holder's alone: %v", got, want)
	}
	release(t, h2)
}

func TestWatchdogKeepsLockPastItsLease(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	reg := prometheus.NewRegistry()
	const lease = 300 * time.Millisecond
	c := newClient(t, rdb, lock.Options{Lease: lease, Registerer: reg})
	name := testkit.Prefix(t)

	h := acquire(t, c, name, "a", lock.AcquireOptions{})
	select {
	case <-h.Context().Done():
		t.Fatalf("hold ended while the watchdog ran: %v", h.Context().Err())
	case <-time.After(4 * lease):
	}
	if got := testkit.HGetAll(t, rdb, name); got[c.Field("a")] != "1" {
		t.Fatalf("after %v: HGETALL = %v, want the hold kept", 4*lease, got)
	}
	if ttl := testkit.PTTL(t, rdb, name); ttl <= 0 || ttl > lease {
		t.Errorf("PTTL = %v, want in (0, %v]", ttl, lease)
	}
	ok := testkit.Metric(t, reg, "courier_lock_renewals_total", "lock", name, "result", "ok")
	bad := testkit.Metric(t, reg, "courier_lock_renewals_total", "lock", name, "result", "lost") +
		testkit.Metric(t, reg, "courier_lock_renewals_total", "lock", name, "result", "error")
	t.Logf("%v held for %v: %v renewals ok (one per %v)", lease, 4*lease, ok, lease/3)
	if ok < 3 || bad != 0 {
		t.Errorf("renewals ok=%v, lost+error=%v; want at least 3 ok and no others", ok, bad)
	}
	release(t, h)
	if testkit.Exists(t, rdb, name) {
		t.Error("key left after release")
	}
}

func TestDeletedLockCancelsHoldWithinOneRenewal(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	reg := prometheus.NewRegistry()
	const lease = 300 * time.Millisecond
	interval := lease / 3
	c := newClient(t, rdb, lock.Options{Lease: lease, Registerer: reg})
	name := testkit.Prefix(t)

	h := acquire(t, c, name, "leader", lock.AcquireOptions{})
	start := time.Now()
	testkit.Del(t, rdb, name)
	at, cause := ended(t, h, start, 10*time.Second)
	t.Logf("lock deleted behind its back: hold ended after %v (renewal interval %v)", at, interval)
	if !errors.Is(cause, lock.ErrLockLost) {
		t.Errorf("cause %v, want ErrLockLost", cause)
	}
	// One interval, plus slack for a loaded machine.
	if at > interval+200*time.Millisecond {
		t.Errorf("hold ended %v after the key was deleted, want within about one renewal interval (%v)", at, interval)
	}
	if n := testkit.Metric(t, reg, "courier_lock_renewals_total", "lock", name, "result", "lost"); n != 1 {
		t.Errorf("renewals lost = %v, want 1", n)
	}
	if err := h.Release(t.Context()); !errors.Is(err, lock.ErrNotHeld) || !errors.Is(err, lock.ErrLockLost) {
		t.Errorf("Release of a lost hold = %v, want ErrNotHeld wrapping ErrLockLost", err)
	}
}
