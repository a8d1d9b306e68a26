package lock

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// These tests run in synctest bubbles against fakeRedis: each makes Redis
// and the Client count a holder's holds differently, through a lost reply
// or a call that never ran, and checks that the holder's next Acquire
// takes one hold and its last Release deletes and announces the lock.

// failNext makes the next call of op fail with err (errLostReply: it runs,
// and its reply is lost); the calls after it run as usual.
func failNext(f *fakeRedis, op string, err error) {
	var once sync.Once
	f.set(func(f *fakeRedis) {
		f.lose = func(o string) error {
			var got error
			if o == op {
				once.Do(func() { got = err })
			}
			return got
		}
	})
}

// releasedAndAnnounced fails unless lock L is gone from f and one unlock
// message more than before was published.
func releasedAndAnnounced(t *testing.T, f *fakeRedis, c *Client, holder string, unlocks *atomic.Int64, before int64) {
	t.Helper()
	synctest.Wait()
	if n := f.count("L", c.Field(holder)); n != 0 {
		t.Errorf("hold count %d after the last Release, want the lock deleted", n)
	}
	if got := unlocks.Load(); got != before+1 {
		t.Errorf("%d unlock messages from the last Release, want 1", got-before)
	}
}

func TestLostReentryReplyIsGivenBackByTheLastRelease(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c := fakeClient(t, f, Options{Lease: testLease})
		unlocks := subscribeCount(t, f, Channel("L"))
		h := mustAcquire(t, c, "L", "a", AcquireOptions{})
		failNext(f, "acquire", errLostReply)
		if _, err := c.Acquire(t.Context(), "L", "a", AcquireOptions{}); !errors.Is(err, errLostReply) {
			t.Fatalf("re-entry with its reply lost = %v, want the lost reply", err)
		}
		if n := f.count("L", c.Field("a")); n != 2 {
			t.Fatalf("Redis counts %d holds, want 2: the lost re-entry ran", n)
		}
		if err := h.Release(t.Context()); err != nil {
			t.Fatalf("Release: %v", err)
		}
		releasedAndAnnounced(t, f, c, "a", unlocks, 0)
	})
}

func TestLostAcquireReplyIsNotReentered(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c := fakeClient(t, f, Options{Lease: testLease})
		unlocks := subscribeCount(t, f, Channel("L"))
		failNext(f, "acquire", errLostReply)
		if _, err := c.Acquire(t.Context(), "L", "a", AcquireOptions{}); !errors.Is(err, errLostReply) {
			t.Fatalf("Acquire with its reply lost = %v, want the lost reply", err)
		}
		h := mustAcquire(t, c, "L", "a", AcquireOptions{})
		if n := f.count("L", c.Field("a")); n != 1 {
			t.Errorf("Redis counts %d holds after acquiring again, want 1", n)
		}
		// The stale hold was given back before the new one was taken.
		if got := unlocks.Load(); got != 1 {
			t.Errorf("%d unlock messages before the new hold, want 1 (the stale hold's)", got)
		}
		if err := h.Release(t.Context()); err != nil {
			t.Fatalf("Release: %v", err)
		}
		releasedAndAnnounced(t, f, c, "a", unlocks, 1)
	})
}

func TestFailedReleasesAreGivenBack(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"not sent", errNetwork},
		{"reply lost", errLostReply},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				f := newFakeRedis()
				c := fakeClient(t, f, Options{Lease: testLease})
				unlocks := subscribeCount(t, f, Channel("L"))

				// A re-entered hold's release fails: the last Release gives
				// back whatever Redis still counts.
				h1 := mustAcquire(t, c, "L", "a", AcquireOptions{})
				h2 := mustAcquire(t, c, "L", "a", AcquireOptions{})
				failNext(f, "release", tc.err)
				if err := h2.Release(t.Context()); !errors.Is(err, tc.err) {
					t.Fatalf("Release = %v, want %v", err, tc.err)
				}
				if h1.Context().Err() != nil {
					t.Fatalf("the other hold ended: %v", context.Cause(h1.Context()))
				}
				if err := h1.Release(t.Context()); err != nil {
					t.Fatalf("last Release: %v", err)
				}
				releasedAndAnnounced(t, f, c, "a", unlocks, 0)

				// The last hold's release fails: the holder's next Acquire
				// takes one hold, not a second on the one Redis may keep.
				h := mustAcquire(t, c, "L", "a", AcquireOptions{})
				failNext(f, "release", tc.err)
				if err := h.Release(t.Context()); !errors.Is(err, tc.err) {
					t.Fatalf("Release = %v, want %v", err, tc.err)
				}
				h = mustAcquire(t, c, "L", "a", AcquireOptions{})
				if n := f.count("L", c.Field("a")); n != 1 {
					t.Errorf("Redis counts %d holds after acquiring again, want 1", n)
				}
				before := unlocks.Load()
				if err := h.Release(t.Context()); err != nil {
					t.Fatalf("Release: %v", err)
				}
				releasedAndAnnounced(t, f, c, "a", unlocks, before)
			})
		})
	}
}

// TestAbandonedReleaseKeepsItsTurn: a Release whose context ends while its
// call is in flight returns at once; the holder's next Acquire waits for
// the call's outcome, so the two never cross in Redis.
func TestAbandonedReleaseKeepsItsTurn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		c := fakeClient(t, f, Options{Lease: testLease})
		h := mustAcquire(t, c, "L", "a", AcquireOptions{})
		f.set(func(f *fakeRedis) { f.releaseDelay = 2 * time.Second })
		t0 := time.Now()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if err := h.Release(ctx); !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) != time.Second {
			t.Fatalf("Release = %v after %v, want DeadlineExceeded after 1s", err, time.Since(t0))
		}
		h2 := mustAcquire(t, c, "L", "a", AcquireOptions{})
		if at := time.Since(t0); at != 2*time.Second {
			t.Errorf("the next Acquire took the lock at +%v, want +2s, once the release had run", at)
		}
		if n := f.count("L", c.Field("a")); n != 1 {
			t.Errorf("Redis counts %d holds, want 1", n)
		}
		f.set(func(f *fakeRedis) { f.releaseDelay = 0 })
		if err := h2.Release(t.Context()); err != nil {
			t.Fatalf("Release: %v", err)
		}
	})
}

// TestOneHolderFromManyGoroutines: goroutines acquire and release one
// holder's lock at once (re-entries), with calls that take time, are
// abandoned, fail or lose their replies. Once every Held is released, no
// hold is live here, the holder's next Acquire takes exactly one hold and
// its Release deletes the lock.
func TestOneHolderFromManyGoroutines(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		f := newFakeRedis()
		rng := rand.New(rand.NewPCG(1, 2))
		var rmu sync.Mutex
		roll := func(n int) int {
			rmu.Lock()
			defer rmu.Unlock()
			return rng.IntN(n)
		}
		f.set(func(f *fakeRedis) {
			f.acquireDelay = 3 * time.Millisecond
			f.releaseDelay = 2 * time.Millisecond
			f.lose = func(string) error {
				switch roll(10) {
				case 0:
					return errLostReply
				case 1:
					return errNetwork
				}
				return nil
			}
		})
		c := fakeClient(t, f, Options{Lease: testLease})
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				var mine []*Held
				for i := range 40 {
					if len(mine) > 0 && (roll(2) == 0 || i == 39) {
						h := mine[len(mine)-1]
						mine = mine[:len(mine)-1]
						_ = h.Release(t.Context()) // may fail: then Redis may keep it
						continue
					}
					ctx, cancel := context.WithTimeout(t.Context(), time.Duration(1+roll(4))*time.Millisecond)
					h, err := c.Acquire(ctx, "L", "a", AcquireOptions{})
					cancel()
					if err == nil {
						mine = append(mine, h)
					}
					time.Sleep(time.Duration(roll(3)) * time.Millisecond)

				}
				for _, h := range mine {
					_ = h.Release(t.Context())
				}
			})
		}
		wg.Wait()
		time.Sleep(time.Second) // the bubble's fake clock: abandoned calls run to their end
		synctest.Wait()
		f.set(func(f *fakeRedis) { f.lose = nil })

		c.mu.Lock()
		live := c.holds[lockRef{"L", c.Field("a")}]
		c.mu.Unlock()
		if live != nil {
			t.Fatalf("a hold of %d is live after every Held was released", live.count)
		}
		// Whatever Redis still counts is stale: the next hold replaces it.
		h := mustAcquire(t, c, "L", "a", AcquireOptions{})
		if n := f.count("L", c.Field("a")); n != 1 {
			t.Errorf("Redis counts %d holds for one Held, want 1", n)
		}
		if err := h.Release(t.Context()); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if n := f.count("L", c.Field("a")); n != 0 {
			t.Errorf("Redis counts %d holds after the last Release, want the lock deleted", n)
		}
		c.mu.Lock()
		gates := len(c.gates)
		c.mu.Unlock()
		if gates != 0 {
			t.Errorf("%d gates left open, want none", gates)
		}
	})
}
