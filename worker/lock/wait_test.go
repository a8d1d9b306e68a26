package lock_test

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

func TestMutualExclusionAcrossClients(t *testing.T) {
	t.Parallel()
	const goroutines, rounds = 50, 4
	reg := prometheus.NewRegistry()
	var clients []*lock.Client
	for range 3 { // three processes: three connections, three client ids
		clients = append(clients, newClient(t, testkit.Single(t), lock.Options{Registerer: reg}))
	}
	name := testkit.Prefix(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	var inside, most, entered atomic.Int64
	errs := make(chan error, goroutines)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range goroutines {
		c := clients[g%len(clients)]
		wg.Go(func() {
			for range rounds {
				h, err := c.Acquire(ctx, name, fmt.Sprintf("g%d", g), lock.AcquireOptions{Wait: -1})
				if err != nil {
					errs <- err
					return
				}
				n := inside.Add(1)
				for cur := most.Load(); n > cur && !most.CompareAndSwap(cur, n); cur = most.Load() {
				}
				entered.Add(1)
				runtime.Gosched() // let others run while inside
				inside.Add(-1)
				if err := h.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	contended := testkit.Metric(t, reg, "courier_lock_contention_total", "lock", name)
	t.Logf("%d goroutines on 3 clients, %d rounds each: %v; %v contended attempts",
		goroutines, rounds, time.Since(start).Round(time.Millisecond), contended)
	if most.Load() != 1 {
		t.Errorf("up to %d holders inside at once, want 1", most.Load())
	}
	if entered.Load() != goroutines*rounds {
		t.Errorf("entered %d times, want %d", entered.Load(), goroutines*rounds)
	}
}

// TestWaiterWakesOnRelease measures release→acquire: the waiter sleeps on
// the unlock message (the holder's lease is 30s, so only the message can
// wake it this soon).
func TestWaiterWakesOnRelease(t *testing.T) {
	t.Parallel()
	const rounds = 30
	reg := prometheus.NewRegistry()
	holder := newClient(t, testkit.Single(t), lock.Options{})
	waiter := newClient(t, testkit.Single(t), lock.Options{Registerer: reg})
	name := testkit.Prefix(t)
	contention := func() float64 {
		return testkit.Metric(t, reg, "courier_lock_contention_total", "lock", name)
	}

	var lat []time.Duration
	for range rounds {
		h := acquire(t, holder, name, "holder", lock.AcquireOptions{})
		before := contention()
		got := make(chan time.Time, 1)
		errc := make(chan error, 1)
		go func() {
			w, err := waiter.Acquire(t.Context(), name, "waiter", lock.AcquireOptions{Wait: 20 * time.Second})
			got <- time.Now()
			if err == nil {
				err = w.Release(t.Context())
			}
			errc <- err
		}()
		// Two contended attempts: the first, and the one made once the
		// subscription is live; then the waiter sleeps.
		testkit.Eventually(t, 10*time.Second, "the waiter to sleep", func() bool { return contention() >= before+2 })
		released := time.Now()
		release(t, h)
		lat = append(lat, (<-got).Sub(released))
		if err := <-errc; err != nil {
			t.Fatalf("waiter: %v", err)
		}
	}
	// The last waiter gone, the shared connection leaves the channel.
	rdb := testkit.Single(t)
	testkit.Eventually(t, 10*time.Second, "UNSUBSCRIBE after the last waiter", func() bool { return numsub(t, rdb, lock.Channel(name)) == 0 })

	slices.Sort(lat)
	median, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	t.Logf("release→acquire over %d rounds: median %v, p99 %v, max %v", rounds, median, p99, lat[len(lat)-1])
	if median > 100*time.Millisecond {
		t.Errorf("median wake-up latency %v, want well under 100ms (woken by the unlock message)", median)
	}
}

// TestWaiterWithoutUnlockMessageWakesAtTTL: the lock disappears without an
// unlock message (DEL instead of the release script); the waiter still
// gets it when the TTL it was told runs out, without polling before.
func TestWaiterWithoutUnlockMessageWakesAtTTL(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	reg := prometheus.NewRegistry()
	holder := newClient(t, rdb, lock.Options{})
	waiter := newClient(t, testkit.Single(t), lock.Options{Registerer: reg})
	name := testkit.Prefix(t)
	const ttl = 600 * time.Millisecond

	acquire(t, holder, name, "holder", lock.AcquireOptions{Lease: time.Minute})
	if err := rdb.Do(t.Context(), rdb.B().Pexpire().Key(name).Milliseconds(ttl.Milliseconds()).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	got := make(chan error, 1)
	go func() {
		w, err := waiter.Acquire(t.Context(), name, "waiter", lock.AcquireOptions{Wait: 20 * time.Second})
		if err == nil {
			err = w.Release(t.Context())
		}
		got <- err
	}()
	contention := func() float64 {
		return testkit.Metric(t, reg, "courier_lock_contention_total", "lock", name)
	}
	testkit.Eventually(t, 5*time.Second, "the waiter to sleep", func() bool { return contention() >= 2 })
	testkit.Del(t, rdb, name) // no unlock message
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
	took := time.Since(start)
	attempts := contention()
	t.Logf("lock deleted silently: waiter acquired after %v (TTL %v), %v contended attempts", took, ttl, attempts)
	if took < ttl-100*time.Millisecond || took > ttl+time.Second {
		t.Errorf("waiter acquired after %v, want when the %v TTL ran out", took, ttl)
	}
	if attempts != 2 {
		t.Errorf("%v contended attempts, want 2: no polling while the TTL runs", attempts)
	}
}
