package limiter

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

func mustAcquire(t *testing.T, l *Limiter, name string, max int, lease time.Duration) *Slot {
	t.Helper()
	s, err := l.Acquire(t.Context(), name, max, lease)
	if err != nil {
		t.Fatalf("Acquire(%s): %v", name, err)
	}
	return s
}

func TestWatchdogRenewsEveryThirdOfTheLease(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		l := fakeLimiter(t, f, "p1")
		t0 := time.Now()
		s := mustAcquire(t, l, "api", 2, testLease)

		time.Sleep(65 * time.Second)
		synctest.Wait()
		calls := f.extendCalls()
		if len(calls) != 6 {
			t.Fatalf("%d renewals in 65s, want 6 (every 10s)", len(calls))
		}
		for i, c := range calls {
			if at, want := c.at.Sub(t0), time.Duration(i+1)*testLease/3; at != want || c.lease != testLease || c.holder != s.Holder() {
				t.Errorf("renewal %d at +%v of %s with %v, want +%v of %s with %v", i+1, at, c.holder, c.lease, want, s.Holder(), testLease)
			}
		}
		if s.Context().Err() != nil || !f.holds(l.slotsKey("api"), s.Holder()) {
			t.Fatalf("the slot ended while renewed: %v", context.Cause(s.Context()))
		}

		if err := s.Release(t.Context()); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if f.holds(l.slotsKey("api"), s.Holder()) {
			t.Error("the slot is still held after Release")
		}
		if cause := context.Cause(s.Context()); !errors.Is(cause, ErrReleased) {
			t.Errorf("cause after Release = %v, want ErrReleased", cause)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(f.extendCalls()); n != 6 {
			t.Errorf("%d renewals after Release, want none", n-6)
		}
		if err := s.Release(t.Context()); !errors.Is(err, ErrReleased) {
			t.Errorf("second Release = %v, want ErrReleased", err)
		}
	})
}

// TestSlotExpiresWhenRenewalsFail: with Redis unreachable, the slot ends
// with ErrSlotExpired at the last confirmed send plus the lease minus the
// margin, before Redis would free it.
func TestSlotExpiresWhenRenewalsFail(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		l := fakeLimiter(t, f, "p1")
		t0 := time.Now()
		s := mustAcquire(t, l, "api", 1, testLease)
		// The first renewal (+10s) is confirmed; every later one fails.
		f.set(func(f *fakeRedis) {
			f.extendErr = func(at time.Time) error {
				if at.Sub(t0) > testLease/3 {
					return errors.New("network unreachable")
				}
				return nil
			}
		})
		<-s.Context().Done()
		want := testLease/3 + testLease - margin(testLease) // 10s + 30s - 3s
		if got := time.Since(t0); got != want {
			t.Errorf("the slot ended at +%v, want +%v", got, want)
		}
		if cause := context.Cause(s.Context()); !errors.Is(cause, ErrSlotExpired) || !errors.Is(cause, ErrSlotLost) {
			t.Errorf("cause = %v, want ErrSlotExpired (an ErrSlotLost)", cause)
		}
		if !f.holds(l.slotsKey("api"), s.Holder()) {
			t.Error("Redis (the fake) freed the slot before the holder stopped")
		}
		// Release still frees what Redis holds, and says the slot was lost.
		if err := s.Release(t.Context()); !errors.Is(err, ErrSlotExpired) {
			t.Errorf("Release of an expired slot = %v, want ErrSlotExpired", err)
		}
		if f.holds(l.slotsKey("api"), s.Holder()) {
			t.Error("Release of an expired slot left it held in Redis")
		}
	})
}

// TestSlotLostWhenRedisDropsIt: a renewal that finds the holder gone ends
// the slot at once with ErrSlotLost; Extend says so too.
func TestSlotLostWhenRedisDropsIt(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		l := fakeLimiter(t, f, "p1")
		t0 := time.Now()
		s := mustAcquire(t, l, "api", 1, testLease)
		time.Sleep(time.Second)
		f.drop(l.slotsKey("api"), s.Holder())
		<-s.Context().Done()
		if got := time.Since(t0); got != testLease/3 {
			t.Errorf("the slot ended at +%v, want at the next renewal, +%v", got, testLease/3)
		}
		if cause := context.Cause(s.Context()); !errors.Is(cause, ErrSlotLost) || errors.Is(cause, ErrSlotExpired) {
			t.Errorf("cause = %v, want ErrSlotLost", cause)
		}
		if err := s.Extend(t.Context(), testLease); !errors.Is(err, ErrSlotLost) {
			t.Errorf("Extend of a lost slot = %v, want ErrSlotLost", err)
		}

		s2 := mustAcquire(t, l, "api", 1, testLease)
		f.drop(l.slotsKey("api"), s2.Holder())
		if err := s2.Extend(t.Context(), testLease); !errors.Is(err, ErrSlotLost) {
			t.Errorf("Extend after Redis dropped the slot = %v, want ErrSlotLost", err)
		}
		if cause := context.Cause(s2.Context()); !errors.Is(cause, ErrSlotLost) {
			t.Errorf("cause after Extend found it gone = %v, want ErrSlotLost", cause)
		}
	})
}

// TestExtendRetimesTheWatchdog: Extend renews at once and the watchdog
// renews with the new lease from then on.
func TestExtendRetimesTheWatchdog(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		l := fakeLimiter(t, f, "p1")
		s := mustAcquire(t, l, "api", 1, testLease)
		time.Sleep(time.Second)
		t1 := time.Now()
		if err := s.Extend(t.Context(), 3*time.Second); err != nil {
			t.Fatalf("Extend: %v", err)
		}
		time.Sleep(5 * time.Second)
		synctest.Wait()
		calls := f.extendCalls()
		want := []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second}
		if len(calls) != len(want) {
			t.Fatalf("%d extends, want %d: Extend, then every second", len(calls), len(want))
		}
		for i, c := range calls {
			if at := c.at.Sub(t1); at != want[i] || c.lease != 3*time.Second {
				t.Errorf("extend %d at +%v with %v, want +%v with 3s", i, at, c.lease, want[i])
			}
		}
		if s.Context().Err() != nil {
			t.Fatalf("the slot ended: %v", context.Cause(s.Context()))
		}
		if err := s.Extend(t.Context(), time.Millisecond); !errors.Is(err, ErrInvalid) {
			t.Errorf("Extend with 1ms = %v, want ErrInvalid", err)
		}
	})
}

// TestCloseEndsSlotsWithoutReleasing: Close ends every slot with
// ErrClosed and leaves them to their lease in Redis.
func TestCloseEndsSlotsWithoutReleasing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		l := fakeLimiter(t, f, "p1")
		s := mustAcquire(t, l, "api", 1, testLease)
		l.Close()
		if cause := context.Cause(s.Context()); !errors.Is(cause, ErrClosed) {
			t.Errorf("cause after Close = %v, want ErrClosed", cause)
		}
		if !f.holds(l.slotsKey("api"), s.Holder()) {
			t.Error("Close released the slot in Redis")
		}
		time.Sleep(testLease)
		if f.holds(l.slotsKey("api"), s.Holder()) {
			t.Error("the slot of a closed Limiter is still held after its lease")
		}
		if _, err := l.Acquire(t.Context(), "api", 1, testLease); !errors.Is(err, ErrClosed) {
			t.Errorf("Acquire after Close = %v, want ErrClosed", err)
		}
		if _, _, err := l.Take(t.Context(), "api", 1, time.Second); !errors.Is(err, ErrClosed) {
			t.Errorf("Take after Close = %v, want ErrClosed", err)
		}
	})
}
