package lock_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// TestLocksWorkWhileRedisIsFull elects leaders the way queues do, on a
// Redis that is out of memory (maxmemory reached, noeviction): a lock is
// taken, its watchdog renews it beyond its lease, and it is released; a
// process waiting for a lock takes it over as soon as its holder releases
// it.
func TestLocksWorkWhileRedisIsFull(t *testing.T) {
	t.Parallel()
	r := testkit.StartPrivate(t)
	rdb := r.Client(t)
	reg, waiterReg := prometheus.NewRegistry(), prometheus.NewRegistry()
	const lease = 300 * time.Millisecond
	a := newClient(t, rdb, lock.Options{Lease: lease, Registerer: reg})
	holder := newClient(t, rdb, lock.Options{}) // the default 30 s lease
	waiter := newClient(t, rdb, lock.Options{Registerer: waiterReg})
	prefix := testkit.Prefix(t)
	renewing, handed := prefix+":{a}:leader", prefix+":{b}:leader"
	r.Fill(t)

	held := acquire(t, a, renewing, "leader", lock.AcquireOptions{})
	renewed := func() float64 {
		return testkit.Metric(t, reg, "courier_lock_renewals_total", "lock", renewing, "result", "ok")
	}
	testkit.Eventually(t, 10*time.Second, "five renewals (more than a lease)", func() bool { return renewed() >= 5 })
	if err := held.Context().Err(); err != nil {
		t.Fatalf("the hold ended while Redis is full: %v", context.Cause(held.Context()))
	}
	release(t, held)

	old := acquire(t, holder, handed, "leader", lock.AcquireOptions{})
	taken := make(chan error, 1)
	go func() {
		h, err := waiter.Acquire(t.Context(), handed, "leader", lock.AcquireOptions{Wait: -1})
		if err == nil {
			err = h.Release(t.Context())
		}
		taken <- err
	}()
	testkit.Eventually(t, 10*time.Second, "the waiter to find the lock held", func() bool {
		return testkit.Metric(t, waiterReg, "courier_lock_contention_total", "lock", handed) >= 1
	})
	start := time.Now()
	release(t, old)
	select {
	case err := <-taken:
		if err != nil {
			t.Fatalf("the waiter's Acquire and Release while Redis is full: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not take the released lock within 10s (its lease is 30s): the release did not wake it")
	}
	t.Logf("the waiter took the lock %s after the release", time.Since(start).Round(time.Millisecond))
}
