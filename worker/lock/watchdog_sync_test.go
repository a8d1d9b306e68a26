package lock

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// These tests run in synctest bubbles against fakeRedis: time is fake, so
// every instant below is exact.

const testLease = 30 * time.Second // renewals every 10s, margin 3s

func mustAcquire(t *testing.T, c *Client, name, holder string, o AcquireOptions) *Held {
	t.Helper()
	h, err := c.Acquire(t.Context(), name, holder, o)
	if err != nil {
		t.Fatalf("Acquire(%s, %s): %v", name, holder, err)
	}
	return h
}

// endedAt waits for h's hold to end and returns when, relative to t0, and
// the cause.
func endedAt(h *Held, t0 time.Time) (time.Duration, error) {
	<-h.Context().Done()
	return time.Since(t0), context.Cause(h.Context())
}

func TestWatchdogRenewsEveryThirdOfLeaseInOneCall(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c := fakeClient(t, f, Options{Lease: testLease, ID: "c1"})
		t0 := time.Now()
		a1 := mustAcquire(t, c, "a", "h", AcquireOptions{})
		a2 := mustAcquire(t, c, "a", "h", AcquireOptions{}) // re-entered: shares a1's renewal
		b := mustAcquire(t, c, "b", "h", AcquireOptions{})
		fixed := mustAcquire(t, c, "f", "h", AcquireOptions{Lease: time.Hour}) // never renewed

		time.Sleep(65 * time.Second)
		synctest.Wait()
		calls := f.renewCalls()
		if len(calls) != 6 {
			t.Fatalf("%d renewal calls in 65s, want 6 (every 10s)", len(calls))
		}
		for i, call := range calls {
			if at, want := call.at.Sub(t0), time.Duration(i+1)*testLease/3; at != want {
				t.Errorf("renewal %d at +%v, want +%v", i+1, at, want)
			}
			if call.lease != testLease {
				t.Errorf("renewal %d lease %v, want %v", i+1, call.lease, testLease)
			}
			if len(call.locks) != 2 {
				t.Errorf("renewal %d carried %v, want a and b once each in one call", i+1, call.locks)
			}
		}
		if a1.Context().Err() != nil || b.Context().Err() != nil || fixed.Context().Err() != nil {
			t.Fatal("a hold ended while renewed")
		}
		if n := f.count("a", c.Field("h")); n != 2 {
			t.Errorf("hold count of a = %d, want 2", n)
		}

		// Released locks are not renewed any more.
		for _, h := range []*Held{a1, a2, b} {
			if err := h.Release(t.Context()); err != nil {
				t.Fatalf("Release: %v", err)
			}
		}
		n := len(f.renewCalls())
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := len(f.renewCalls()); got != n {
			t.Errorf("%d renewal calls after every watchdog hold was released, want none", got-n)
		}
		if err := fixed.Release(t.Context()); err != nil {
			t.Fatalf("Release fixed: %v", err)
		}
	})
}

func TestStepDownAtSentPlusLeaseMinusMargin(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		failFrom time.Duration // renewals sent from then on fail
		hang     bool          // renewals get no answer at all
		want     time.Duration // when the hold ends
	}{
		// Acquire sent at +0: deadline +0 + 30s - 3s.
		{name: "every renewal errors", failFrom: 0, want: 27 * time.Second},
		// Renewal sent at +10s confirmed: deadline +10s + 27s.
		{name: "errors after one renewal", failFrom: 15 * time.Second, want: 37 * time.Second},
		// The deadline does not wait for a renewal stuck in flight.
		{name: "renewals hang", hang: true, want: 27 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFakeRedis()
				t0 := time.Now()
				f.set(func(f *fakeRedis) {
					f.renewHang = tc.hang
					f.renewErr = func(at time.Time) error {
						if at.Sub(t0) >= tc.failFrom {
							return errNetwork
						}
						return nil
					}
				})
				c := fakeClient(t, f, Options{Lease: testLease})
				h := mustAcquire(t, c, "L", "leader", AcquireOptions{})
				at, cause := endedAt(h, t0)
				if at != tc.want || !errors.Is(cause, ErrLockExpired) {
					t.Errorf("hold ended at +%v with %v, want +%v with ErrLockExpired", at, cause, tc.want)
				}
				// Redis would still have the key for the margin: the step-down
				// comes first.
				if n := f.count("L", c.Field("leader")); n != 1 {
					t.Errorf("hold count in Redis at step-down = %d, want 1 (the key outlives the local deadline)", n)
				}
				if err := h.Release(t.Context()); !errors.Is(err, ErrNotHeld) {
					t.Errorf("Release after expiry = %v, want ErrNotHeld", err)
				}
			})
		})
	}
}

// TestSlowRenewalAnswersStillCount: renewals reach Redis at once but
// answer after longer than the renewal interval (12s for 10s). Each answer
// still confirms the renewal it answers, from its send, so the hold lives
// on; taken for lost, they would end it here at +27s while Redis kept it.
func TestSlowRenewalAnswersStillCount(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		f.set(func(f *fakeRedis) { f.renewSlow = 12 * time.Second })
		c := fakeClient(t, f, Options{Lease: testLease})
		h := mustAcquire(t, c, "L", "leader", AcquireOptions{})
		time.Sleep(2 * time.Minute)
		if err := h.Context().Err(); err != nil {
			t.Fatalf("hold ended (%v) while every renewal reached Redis and answered within %v", context.Cause(h.Context()), testLease-Margin(testLease))
		}
		if n := f.count("L", c.Field("leader")); n != 1 {
			t.Errorf("hold count %d, want 1", n)
		}
		if err := h.Release(t.Context()); err != nil {
			t.Fatalf("Release: %v", err)
		}
	})
}

func TestRenewalFindingLockGoneEndsHoldAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c := fakeClient(t, f, Options{Lease: testLease})
		t0 := time.Now()
		h := mustAcquire(t, c, "L", "leader", AcquireOptions{})
		h2 := mustAcquire(t, c, "L", "leader", AcquireOptions{})
		time.Sleep(5 * time.Second)
		f.del("L")
		at, cause := endedAt(h, t0)
		if at != 10*time.Second || !errors.Is(cause, ErrLockLost) {
			t.Errorf("hold ended at +%v with %v, want +10s (the next renewal) with ErrLockLost", at, cause)
		}
		synctest.Wait() // the hold's contexts end one after another
		if cause := context.Cause(h2.Context()); !errors.Is(cause, ErrLockLost) {
			t.Errorf("re-entered hold's cause %v, want ErrLockLost too", cause)
		}
		if err := h.Release(t.Context()); !errors.Is(err, ErrNotHeld) || !errors.Is(err, ErrLockLost) {
			t.Errorf("Release after loss = %v, want ErrNotHeld wrapping ErrLockLost", err)
		}
	})
}

func TestWaiterWakesAtTTLWithoutUnlockMessage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		holder := fakeClient(t, f, Options{Lease: testLease, ID: "java"})
		waiter := fakeClient(t, f, Options{Lease: testLease, ID: "go"})
		t0 := time.Now()
		mustAcquire(t, holder, "L", "t1", AcquireOptions{Lease: 5 * time.Second}) // dies without releasing
		h, err := waiter.Acquire(t.Context(), "L", "w", AcquireOptions{Wait: time.Minute})
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		if at := time.Since(t0); at != 5*time.Second {
			t.Errorf("waiter acquired at +%v, want +5s: the TTL the acquire script returned", at)
		}
		if n := f.count("L", waiter.Field("w")); n != 1 {
			t.Errorf("waiter's hold count %d, want 1", n)
		}
		h.Release(t.Context())
	})
}

func TestWaiterWakesOnUnlockMessage(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c1 := fakeClient(t, f, Options{Lease: testLease})
		c2 := fakeClient(t, f, Options{Lease: testLease})
		t0 := time.Now()
		held := mustAcquire(t, c1, "L", "a", AcquireOptions{})
		go func() {
			time.Sleep(3 * time.Second)
			held.Release(context.WithoutCancel(t.Context()))
		}()
		// Two waiters in one process: the unlock wakes the older, whose
		// release wakes the other.
		type result struct {
			at  time.Duration
			err error
		}
		results := make(chan result, 2)
		for i, holder := range []string{"w1", "w2"} {
			go func() {
				h, err := c2.Acquire(t.Context(), "L", holder, AcquireOptions{Wait: -1})
				if err == nil {
					time.Sleep(time.Second)
					err = h.Release(t.Context())
				}
				results <- result{time.Since(t0), err}
			}()
			if i == 0 {
				synctest.Wait() // w1 waits first
			}
		}
		for _, want := range []time.Duration{4 * time.Second, 5 * time.Second} {
			r := <-results
			if r.err != nil || r.at != want {
				t.Errorf("waiter done at +%v (%v), want +%v", r.at, r.err, want)
			}
		}
		synctest.Wait()
		if n := f.subscribers(Channel("L")); n != 0 {
			t.Errorf("%d subscribers left after the waiters were done, want 0", n)
		}
	})
}

func TestWaitElapses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c := fakeClient(t, f, Options{Lease: testLease})
		mustAcquire(t, c, "L", "a", AcquireOptions{})
		t0 := time.Now()
		_, err := c.Acquire(t.Context(), "L", "b", AcquireOptions{Wait: 2 * time.Second})
		if !errors.Is(err, ErrNotAcquired) || time.Since(t0) != 2*time.Second {
			t.Errorf("Acquire = %v after %v, want ErrNotAcquired after 2s", err, time.Since(t0))
		}
		_, err = c.Acquire(t.Context(), "L", "b", AcquireOptions{})
		if !errors.Is(err, ErrNotAcquired) || time.Since(t0) != 2*time.Second {
			t.Errorf("try-once Acquire = %v, want ErrNotAcquired at once", err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err = c.Acquire(ctx, "L", "b", AcquireOptions{Wait: -1})
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrNotAcquired) {
			t.Errorf("Acquire with ctx ending = %v, want the ctx's error", err)
		}
	})
}

func TestFixedLeaseEndsBeforeTheKeyExpires(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c := fakeClient(t, f, Options{Lease: testLease})
		other := fakeClient(t, f, Options{Lease: testLease})
		t0 := time.Now()
		h := mustAcquire(t, c, "L", "a", AcquireOptions{Lease: 10 * time.Second})
		at, cause := endedAt(h, t0)
		if at != 9*time.Second || !errors.Is(cause, ErrLockExpired) {
			t.Errorf("fixed-lease hold ended at +%v with %v, want +9s (10s - margin) with ErrLockExpired", at, cause)
		}
		if n := f.count("L", c.Field("a")); n != 1 {
			t.Errorf("hold count %d at the local deadline, want 1: the key outlives it by the margin", n)
		}
		// The hold ended here but Redis still counts it: Release gives it
		// back (the field's own count, nobody else's), and the other holder
		// need not wait for the key to expire.
		if err := h.Release(t.Context()); !errors.Is(err, ErrNotHeld) || !errors.Is(err, ErrLockExpired) {
			t.Errorf("Release after the lease = %v, want ErrNotHeld wrapping ErrLockExpired", err)
		}
		if n := f.count("L", c.Field("a")); n != 0 {
			t.Errorf("hold count %d after the Release, want the stale hold given back", n)
		}
		h2, err := other.Acquire(t.Context(), "L", "b", AcquireOptions{Wait: time.Minute})
		if err != nil || time.Since(t0) != 9*time.Second {
			t.Fatalf("other holder acquired at +%v (%v), want +9s, at the Release", time.Since(t0), err)
		}
		if err := h.Release(t.Context()); !errors.Is(err, ErrNotHeld) {
			t.Errorf("second Release = %v, want ErrNotHeld", err)
		}
		if n := f.count("L", other.Field("b")); n != 1 {
			t.Errorf("the other holder's count %d after a repeated Release of the expired hold, want 1", n)
		}
		h2.Release(t.Context())
	})
}

func TestReleaseEndsOnlyItsOwnHold(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c := fakeClient(t, f, Options{Lease: testLease})
		h1 := mustAcquire(t, c, "L", "a", AcquireOptions{})
		h2 := mustAcquire(t, c, "L", "a", AcquireOptions{})
		if err := h2.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		if cause := context.Cause(h2.Context()); !errors.Is(cause, ErrReleased) {
			t.Errorf("released hold's cause %v, want ErrReleased", cause)
		}
		if err := h2.Release(t.Context()); !errors.Is(err, ErrNotHeld) {
			t.Errorf("second Release of one Held = %v, want ErrNotHeld", err)
		}
		if n := f.count("L", c.Field("a")); n != 1 {
			t.Errorf("hold count %d after one of two releases (and a repeated one), want 1", n)
		}
		if h1.Context().Err() != nil {
			t.Error("the other hold ended with the first")
		}
		time.Sleep(2 * testLease) // still renewed
		if h1.Context().Err() != nil || f.count("L", c.Field("a")) != 1 {
			t.Error("the remaining hold was not kept by the watchdog")
		}
		if err := h1.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		if n := f.count("L", c.Field("a")); n != 0 {
			t.Errorf("hold count %d after the last release, want the key gone", n)
		}
	})
}

func TestFailedReleaseStopsRenewing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c := fakeClient(t, f, Options{Lease: testLease})
		h := mustAcquire(t, c, "L", "a", AcquireOptions{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := h.Release(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Release with a cancelled ctx = %v, want context.Canceled", err)
		}
		if cause := context.Cause(h.Context()); !errors.Is(cause, ErrReleased) {
			t.Errorf("cause %v, want ErrReleased", cause)
		}
		time.Sleep(testLease + time.Second)
		if n := len(f.renewCalls()); n != 0 {
			t.Errorf("%d renewals after a failed release, want none: the key must be left to expire", n)
		}
		if n := f.count("L", c.Field("a")); n != 0 {
			t.Errorf("the key outlived its lease (count %d)", n)
		}
	})
}

func TestCloseEndsHoldsAndWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c, err := fakeClientErr(f, Options{Lease: testLease})
		if err != nil {
			t.Fatal(err)
		}
		h := mustAcquire(t, c, "L", "a", AcquireOptions{})
		errc := make(chan error, 1)
		go func() {
			_, err := c.Acquire(t.Context(), "L", "b", AcquireOptions{Wait: -1})
			errc <- err
		}()
		synctest.Wait()
		c.Close()
		if err := <-errc; !errors.Is(err, ErrClosed) {
			t.Errorf("waiting Acquire after Close = %v, want ErrClosed", err)
		}
		if cause := context.Cause(h.Context()); !errors.Is(cause, ErrClosed) {
			t.Errorf("hold's cause after Close %v, want ErrClosed", cause)
		}
		if _, err := c.Acquire(t.Context(), "M", "a", AcquireOptions{}); !errors.Is(err, ErrClosed) {
			t.Errorf("Acquire after Close = %v, want ErrClosed", err)
		}
		if n := f.count("L", c.Field("a")); n != 1 {
			t.Errorf("hold count %d, want 1: Close does not release", n)
		}
		c.Close() // twice is fine
	})
}

func TestAbandonedAttemptIsUndone(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		f.set(func(f *fakeRedis) { f.acquireDelay = 2 * time.Second })
		c := fakeClient(t, f, Options{Lease: testLease})
		other := fakeClient(t, f, Options{Lease: testLease})
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		_, err := c.Acquire(ctx, "L", "a", AcquireOptions{})
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) != time.Second {
			t.Fatalf("Acquire = %v after %v, want DeadlineExceeded after 1s", err, time.Since(t0))
		}
		// The script still ran at +2s and took the lock; it is given back.
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := f.count("L", c.Field("a")); n != 0 {
			t.Errorf("abandoned acquire left hold count %d, want the lock released", n)
		}
		f.set(func(f *fakeRedis) { f.acquireDelay = 0 })
		mustAcquire(t, other, "L", "b", AcquireOptions{}).Release(t.Context())
	})
}
