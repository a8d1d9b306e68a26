package lock_test

import (
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// staleLease is the watchdog lease of the stale-hold tests: renewals
// every second, and the hold ends here 2.7s after the last confirmed one.
const staleLease = 3 * time.Second

// cutOff is a holder's connection to Redis that a test can cut: the lock
// Client's calls go through via, the test reads Redis through direct, and
// between cut and heal the Client's scripts get no confirmation.
type cutOff struct {
	via, direct rueidis.Client
	cut, heal   func()
}

// cutOffs are the ways to cut a holder off: on single Redis its connection
// stalls behind a proxy (nothing gets through either way); on a private
// Redis Cluster the user loses the right to run scripts on every node
// (each call fails with NOPERM), so renewals fail while the test's own
// PEXPIREs still get through.
var cutOffs = []struct {
	name string
	open func(t *testing.T) cutOff
}{
	{"single", func(t *testing.T) cutOff {
		proxy, via := testkit.StartProxyClient(t, testkit.SingleAddr(t))
		return cutOff{via: via, direct: testkit.Single(t), cut: proxy.Stall, heal: proxy.Resume}
	}},
	{"cluster", func(t *testing.T) cutOff {
		pc := testkit.StartPrivateCluster(t, 3, 0)
		acl := func(rule string) func() {
			return func() {
				for _, n := range pc.Nodes {
					n.MustDo(t, "ACL", "SETUSER", "default", rule)
				}
			}
		}
		return cutOff{via: pc.Client(t), direct: pc.Client(t), cut: acl("-@scripting"), heal: acl("+@all")}
	}},
}

// forEachCutOff runs f as parallel subtests, one per way of cutting a
// holder off.
func forEachCutOff(t *testing.T, f func(t *testing.T, co cutOff)) {
	for _, c := range cutOffs {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f(t, c.open(t))
		})
	}
}

// staleHold makes a hold end here while Redis still counts it, as renewals
// that reach Redis but whose replies are lost do: the holder is cut off
// until its hold ends locally (ErrLockExpired) while the test renews the
// key in Redis in the renewals' stead. It returns the holder's lock Client
// and the ended hold.
func staleHold(t *testing.T, co cutOff, name, holder string) (*lock.Client, *lock.Held) {
	t.Helper()
	c := newClient(t, co.via, lock.Options{Lease: staleLease})
	h := acquire(t, c, name, holder, lock.AcquireOptions{})

	co.cut()
	stop := testkit.KeepTTL(t, co.direct, name, staleLease)
	at, cause := ended(t, h, time.Now(), 2*staleLease)
	counted, ok := testkit.HGet(t, co.direct, name, c.Field(holder))
	stop()
	co.heal()
	t.Logf("cut off: the hold ended here after %v with %v; Redis counted %q", at, cause, counted)
	if !errors.Is(cause, lock.ErrLockExpired) {
		t.Fatalf("hold ended with %v, want ErrLockExpired", cause)
	}
	if !ok || counted != "1" {
		t.Fatalf("when the hold ended here, Redis counted %q (present %v), want 1", counted, ok)
	}
	return c, h
}

// TestReacquireAfterLocalExpiryTakesNoSecondHold: the holder acquires again
// after its hold ended here without Redis learning of it (the leader's
// next term). Redis must count one hold, not stack a second on the stale
// one, so that the one Release gives the lock back and wakes the waiters.
func TestReacquireAfterLocalExpiryTakesNoSecondHold(t *testing.T) {
	t.Parallel()
	forEachCutOff(t, func(t *testing.T, co cutOff) {
		name := testkit.Prefix(t)
		c, _ := staleHold(t, co, name, "leader")

		h := acquire(t, c, name, "leader", lock.AcquireOptions{})
		if got, want := testkit.HGetAll(t, co.direct, name), map[string]string{c.Field("leader"): "1"}; !maps.Equal(got, want) {
			t.Errorf("after acquiring again: HGETALL = %v, want %v", got, want)
		}
		waiter := newClient(t, co.direct, lock.Options{Lease: staleLease})
		took := releaseToWaiter(t, co.direct, waiter, h)
		t.Logf("release → waiter acquired: %v", took)
		if took > staleLease/3 {
			t.Errorf("the waiter acquired %v after the release, want at once (woken by the unlock message), long before the %v lease", took, staleLease)
		}
	})
}

// TestReleaseOfExpiredHoldGivesBackWhatRedisCounts: Release of a hold that
// ended here while Redis still counts it gives that count back, and the
// waiters of other processes are woken at once instead of at the TTL.
func TestReleaseOfExpiredHoldGivesBackWhatRedisCounts(t *testing.T) {
	t.Parallel()
	forEachCutOff(t, func(t *testing.T, co cutOff) {
		name := testkit.Prefix(t)
		_, h := staleHold(t, co, name, "job")

		waiter := newClient(t, co.direct, lock.Options{Lease: staleLease})
		done := waitFor(t, co.direct, waiter, name)
		start := time.Now()
		if err := h.Release(t.Context()); !errors.Is(err, lock.ErrNotHeld) || !errors.Is(err, lock.ErrLockExpired) {
			t.Errorf("Release of the expired hold = %v, want ErrNotHeld wrapping ErrLockExpired", err)
		}
		took := receive(t, done).Sub(start)
		t.Logf("release of the expired hold → waiter acquired: %v", took)
		if took > staleLease/3 {
			t.Errorf("the waiter acquired %v after the release, want at once, long before the %v lease", took, staleLease)
		}
	})
}

// TestLastReleaseGivesBackHoldsAClosedClientLeft: a Client with the ID of
// one that was closed while holding (a Daemon run again) stacks its hold
// on the one left behind, which it cannot know of. Its last Release still
// gives the lock back: whatever Redis counts beyond this process's holds
// is stale.
func TestLastReleaseGivesBackHoldsAClosedClientLeft(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name    string
		connect func(testing.TB) rueidis.Client
	}{{"single", testkit.Single}, {"cluster", testkit.Cluster}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rdb := b.connect(t)
			name := testkit.Prefix(t)
			first, err := lock.NewClient(b.connect(t), lock.Options{ID: "run-1"})
			if err != nil {
				t.Fatal(err)
			}
			acquire(t, first, name, "leader", lock.AcquireOptions{})
			first.Close() // not released: Redis keeps counting it

			again := newClient(t, b.connect(t), lock.Options{ID: "run-1"})
			h := acquire(t, again, name, "leader", lock.AcquireOptions{})
			waiter := newClient(t, b.connect(t), lock.Options{})
			took := releaseToWaiter(t, rdb, waiter, h)
			t.Logf("release → waiter acquired: %v", took)
			if took > lock.LeaseDefault/3 {
				t.Errorf("the waiter acquired %v after the release, want at once, long before the %v lease", took, lock.LeaseDefault)
			}
		})
	}
}

// waited is a waiter's Acquire: when it returned, and the hold.
type waited struct {
	at time.Time
	h  *lock.Held
}

// waitFor starts an Acquire of name by waiter in the background and waits
// until it sleeps on the unlock channel.
func waitFor(t *testing.T, rdb rueidis.Client, waiter *lock.Client, name string) <-chan waited {
	t.Helper()
	done := make(chan waited, 1)
	go func() {
		h, err := waiter.Acquire(t.Context(), name, "waiter", lock.AcquireOptions{Wait: time.Minute})
		at := time.Now()
		if err != nil {
			t.Errorf("waiter: %v", err)
		}
		done <- waited{at, h}
	}()
	testkit.Eventually(t, 10*time.Second, "the waiter's subscription", func() bool {
		return testkit.Subscribers(t, rdb, lock.Channel(name)) >= 1
	})
	return done
}

// releaseToWaiter releases h while a waiter of another Client waits for
// its lock, checks that Redis no longer counts h's holder, and returns how
// long after the release the waiter acquired.
func releaseToWaiter(t *testing.T, rdb rueidis.Client, waiter *lock.Client, h *lock.Held) time.Duration {
	t.Helper()
	done := waitFor(t, rdb, waiter, h.Name())
	start := time.Now()
	if err := h.Release(t.Context()); err != nil {
		t.Errorf("Release: %v", err)
	}
	if got := testkit.HGetAll(t, rdb, h.Name()); got[h.Field()] != "" {
		t.Errorf("after the release: HGETALL = %v, still counting the released holder", got)
	}
	return receive(t, done).Sub(start)
}

// receive waits for the waiter (up to its Wait), releases its hold and
// returns when it acquired.
func receive(t *testing.T, done <-chan waited) time.Time {
	t.Helper()
	select {
	case w := <-done:
		if w.h == nil {
			t.FailNow()
		}
		if err := w.h.Release(t.Context()); err != nil {
			t.Errorf("waiter's release: %v", err)
		}
		return w.at
	case <-time.After(time.Minute):
		t.Fatal("the waiter did not acquire within a minute")
		return time.Time{}
	}
}
