package limiter

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestReleaseWakesAWaiterAtOnce: a waiting Acquire takes the slot the
// instant another process releases it, long before its lease ends.
func TestReleaseWakesAWaiterAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		a, b := fakeLimiter(t, f, "a"), fakeLimiter(t, f, "b")
		held := mustAcquire(t, a, "api", 1, testLease)
		got := make(chan *Slot, 1)
		go func() {
			s, err := b.Acquire(t.Context(), "api", 1, testLease)
			if err != nil {
				t.Errorf("waiting Acquire: %v", err)
			}
			got <- s
		}()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("the waiter took a held slot")
		default:
		}
		t0 := time.Now()
		if err := held.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		s := <-got
		if d := time.Since(t0); d != 0 {
			t.Errorf("the waiter took the slot %v after the release, want at once", d)
		}
		if err := s.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
}

// TestWaiterTakesAVanishedHoldersSlotAtItsLease: with no release message
// (the holder died), a waiter tries again when the holder's lease ends,
// and takes the slot then — not before, not later.
func TestWaiterTakesAVanishedHoldersSlotAtItsLease(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		dead, b := fakeLimiter(t, f, "dead"), fakeLimiter(t, f, "b")
		t0 := time.Now()
		mustAcquire(t, dead, "api", 1, 10*time.Second)
		dead.Close() // no more renewals, no release: as after kill -9

		slot, at, err := b.TryAcquire(t.Context(), "api", 1, testLease)
		if slot != nil || err != nil || at.Sub(t0) != 10*time.Second {
			t.Fatalf("TryAcquire = %v, +%v, %v; want none until +10s", slot, at.Sub(t0), err)
		}
		s := mustAcquire(t, b, "api", 1, testLease)
		if d := time.Since(t0); d != 10*time.Second {
			t.Errorf("the waiter took the slot at +%v, want +10s (the dead holder's lease)", d)
		}
		_ = s.Release(t.Context())
	})
}

// TestWaitersOfOneProcessTakeTurns: each release wakes one waiter, the
// oldest; a waiter that gives up passes its wake-up on.
func TestWaitersOfOneProcessTakeTurns(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		a, b := fakeLimiter(t, f, "a"), fakeLimiter(t, f, "b")
		held := []*Slot{mustAcquire(t, a, "api", 2, time.Hour), mustAcquire(t, a, "api", 2, time.Hour)}
		type result struct {
			i int
			s *Slot
		}
		got := make(chan result, 3)
		giveUp, cancel := context.WithCancel(t.Context())
		for i := range 3 {
			ctx := t.Context()
			if i == 0 {
				ctx = giveUp
			}
			go func() {
				s, err := b.Acquire(ctx, "api", 2, time.Hour)
				if err != nil && i != 0 {
					t.Errorf("waiter %d: %v", i, err)
				}
				got <- result{i, s}
			}()
			time.Sleep(time.Second) // arrival order 0, 1, 2
		}
		synctest.Wait()
		cancel() // the oldest gives up
		if r := <-got; r.i != 0 || r.s != nil {
			t.Fatalf("first out: %d with %v, want waiter 0 giving up", r.i, r.s)
		}
		for i, want := range []int{1, 2} {
			if err := held[i].Release(t.Context()); err != nil {
				t.Fatal(err)
			}
			r := <-got
			if r.i != want || r.s == nil {
				t.Fatalf("release %d woke waiter %d (slot %v), want %d", i, r.i, r.s, want)
			}
		}
	})
}

// TestWaitSleepsUntilTheWindowHasRoom: Wait takes at the exact instant the
// oldest take leaves the window, and refuses at once when that is past
// ctx's deadline.
func TestWaitSleepsUntilTheWindowHasRoom(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		l := fakeLimiter(t, f, "p1")
		t0 := time.Now()
		for i := range 3 {
			if ok, _, err := l.Take(t.Context(), "api", 3, time.Minute); !ok || err != nil {
				t.Fatalf("take %d: %v, %v", i, ok, err)
			}
			time.Sleep(10 * time.Second)
		}
		ok, at, err := l.Take(t.Context(), "api", 3, time.Minute)
		if ok || err != nil || at.Sub(t0) != time.Minute {
			t.Fatalf("a fourth take = %v, +%v, %v; want refused until +1m", ok, at.Sub(t0), err)
		}
		short, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if err := l.Wait(short, "api", 3, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait with 10s left = %v, want DeadlineExceeded at once", err)
		}
		if d := time.Since(t0); d != 30*time.Second {
			t.Errorf("the refused Wait returned at +%v, want at once (+30s)", d)
		}
		if err := l.WaitN(t.Context(), "api", 3, time.Minute, 2); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(t0); d != time.Minute+10*time.Second {
			t.Errorf("WaitN(2) took at +%v, want +1m10s (when the two oldest takes left)", d)
		}
	})
}
