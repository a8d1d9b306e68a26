package limiter_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/limiter"
)

// backends are the Redis deployments every test of keys runs on.
var backends = map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster}

// forEachBackend runs fn on single Redis and on Redis Cluster, in
// parallel; connect returns a new client (a process of its own) each call.
func forEachBackend(t *testing.T, fn func(t *testing.T, connect func(testing.TB) rueidis.Client)) {
	t.Helper()
	for name, connect := range backends {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fn(t, connect)
		})
	}
}

// newLimiter returns a Limiter on rdb, closed at cleanup.
func newLimiter(t testing.TB, rdb rueidis.Client, opts limiter.Options) *limiter.Limiter {
	t.Helper()
	l, err := limiter.New(rdb, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(l.Close)
	return l
}

func slotsKey(prefix, name string) string { return prefix + ":{limiter:" + name + "}:slots" }

// TestMaxNeverExceeded: three processes of eight goroutines each contend
// for three slots; the holders counted between Acquire and Release never
// exceed three, and every slot is given back.
func TestMaxNeverExceeded(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, connect func(testing.TB) rueidis.Client) {
		const max, procs, workers, rounds = 3, 3, 8, 15
		prefix := testkit.Prefix(t)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		var holding, peak, done atomic.Int64
		var wg sync.WaitGroup
		for range procs {
			l := newLimiter(t, connect(t), limiter.Options{Prefix: prefix})
			for range workers {
				wg.Go(func() {
					for range rounds {
						s, err := l.Acquire(ctx, "api", max, 5*time.Second)
						if err != nil {
							t.Errorf("Acquire: %v", err)
							return
						}
						n := holding.Add(1)
						for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
						}
						<-time.After(time.Millisecond) // the guarded call
						holding.Add(-1)
						if err := s.Release(ctx); err != nil {
							t.Errorf("Release: %v", err)
							return
						}
						done.Add(1)
					}
				})
			}
		}
		wg.Wait()
		t.Logf("%d slots taken and given back; at most %d held at once", done.Load(), peak.Load())
		if p := peak.Load(); p > max || p < 2 {
			t.Errorf("at most %d held at once, want 2 to %d (never above max, and contended)", p, max)
		}
		if n := done.Load(); n != procs*workers*rounds {
			t.Errorf("%d slots taken and given back, want %d", n, procs*workers*rounds)
		}
		if testkit.Exists(t, connect(t), slotsKey(prefix, "api")) {
			t.Error("the slots key is left after every slot was released")
		}
	})
}

// TestVanishedHolderFreesAfterItsLease: a process that holds a slot and
// vanishes (no renewal, no release: as after kill -9) blocks it until its
// lease passes, not later; a waiter takes it then.
func TestVanishedHolderFreesAfterItsLease(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, connect func(testing.TB) rueidis.Client) {
		rdb := connect(t)
		prefix := testkit.Prefix(t)
		key := slotsKey(prefix, "api")
		const lease = 400 * time.Millisecond
		dead := newLimiter(t, connect(t), limiter.Options{Prefix: prefix})
		s, err := dead.Acquire(t.Context(), "api", 1, lease)
		if err != nil {
			t.Fatal(err)
		}
		dead.Close()
		deadline, ok := testkit.ZScore(t, rdb, key, s.Holder())
		if !ok {
			t.Fatal("the dead holder's slot is not in Redis")
		}

		l := newLimiter(t, rdb, limiter.Options{Prefix: prefix})
		got, at, err := l.TryAcquire(t.Context(), "api", 1, time.Minute)
		if got != nil || err != nil || time.Until(at) <= 0 || time.Until(at) > lease+time.Second {
			t.Fatalf("TryAcquire = %v, in %v, %v; want none until the dead holder's lease ends", got, time.Until(at), err)
		}
		got, err = l.Acquire(t.Context(), "api", 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		mine, _ := testkit.ZScore(t, rdb, key, got.Holder())
		took := mine - time.Minute.Milliseconds() // the Redis clock at the acquire
		if took < deadline {
			t.Errorf("the waiter took the slot at %d, before the dead holder's deadline %d", took, deadline)
		}
		if late := time.Duration(took-deadline) * time.Millisecond; late > time.Second {
			t.Errorf("the waiter took the slot %v after the dead holder's deadline, want about at it", late)
		}
		if _, held := testkit.ZScore(t, rdb, key, s.Holder()); held {
			t.Error("the dead holder is still in the slots key")
		}
		if err := s.Release(t.Context()); !errors.Is(err, limiter.ErrClosed) {
			t.Errorf("Release by the closed Limiter = %v, want ErrClosed", err)
		}
	})
}

// TestWatchdogAndExtendKeepTheSlot: a slot held for several leases is
// kept by the watchdog; Extend moves its deadline; once Redis has lost it,
// Extend says ErrSlotLost and the slot's context ends.
func TestWatchdogAndExtendKeepTheSlot(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, connect func(testing.TB) rueidis.Client) {
		rdb := connect(t)
		prefix := testkit.Prefix(t)
		key := slotsKey(prefix, "api")
		a := newLimiter(t, rdb, limiter.Options{Prefix: prefix})
		b := newLimiter(t, connect(t), limiter.Options{Prefix: prefix})
		const lease = 300 * time.Millisecond
		s, err := a.Acquire(t.Context(), "api", 1, lease)
		if err != nil {
			t.Fatal(err)
		}
		<-time.After(4 * lease)
		if err := s.Context().Err(); err != nil {
			t.Fatalf("the slot ended while held: %v", context.Cause(s.Context()))
		}
		if got, _, err := b.TryAcquire(t.Context(), "api", 1, lease); got != nil || err != nil {
			t.Fatalf("another process took the slot after 4 leases: %v, %v", got, err)
		}

		if err := s.Extend(t.Context(), time.Hour); err != nil {
			t.Fatal(err)
		}
		deadline, _ := testkit.ZScore(t, rdb, key, s.Holder())
		if left := time.Duration(deadline-testkit.RedisNow(t, rdb)) * time.Millisecond; left < time.Hour-10*time.Second {
			t.Errorf("after Extend(1h) the deadline is %v away", left)
		}
		if ttl := testkit.PTTL(t, rdb, key); ttl < time.Hour-10*time.Second {
			t.Errorf("after Extend(1h) the key's PTTL is %v, want the deadline's", ttl)
		}

		testkit.Del(t, rdb, key) // an operator's DEL: the slot is gone
		if err := s.Extend(t.Context(), lease); !errors.Is(err, limiter.ErrSlotLost) {
			t.Fatalf("Extend of a lost slot = %v, want ErrSlotLost", err)
		}
		if cause := context.Cause(s.Context()); !errors.Is(cause, limiter.ErrSlotLost) {
			t.Errorf("the slot's context: %v, want ErrSlotLost", cause)
		}
		if err := s.Release(t.Context()); !errors.Is(err, limiter.ErrSlotLost) {
			t.Errorf("Release of a lost slot = %v, want ErrSlotLost", err)
		}
	})
}

// TestReleaseWakesAWaiter: a release frees the slot at once, and wakes an
// Acquire waiting in another process long before the holder's lease.
func TestReleaseWakesAWaiter(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, connect func(testing.TB) rueidis.Client) {
		rdb := connect(t)
		prefix := testkit.Prefix(t)
		a := newLimiter(t, rdb, limiter.Options{Prefix: prefix})
		b := newLimiter(t, connect(t), limiter.Options{Prefix: prefix})
		held, err := a.Acquire(t.Context(), "api", 1, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan *limiter.Slot, 1)
		go func() {
			s, err := b.Acquire(t.Context(), "api", 1, 30*time.Second)
			if err != nil {
				t.Errorf("waiting Acquire: %v", err)
			}
			got <- s
		}()
		channel := prefix + ":{limiter:api}:free"
		testkit.Eventually(t, 10*time.Second, "the waiter's subscription", func() bool {
			return shardSubscribers(t, rdb, channel) >= 1
		})
		start := time.Now()
		if err := held.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		var s *limiter.Slot
		select {
		case s = <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter was not woken by the release (the lease is 30s)")
		}
		t.Logf("the waiter took the slot %v after the release", time.Since(start).Round(time.Millisecond))
		if err := s.Release(t.Context()); err != nil {
			t.Fatal(err)
		}
		if testkit.Exists(t, rdb, slotsKey(prefix, "api")) {
			t.Error("the slots key is left after the last release")
		}
	})
}

// shardSubscribers returns the clients subscribed to channel with
// SSUBSCRIBE, summed over rdb's nodes.
func shardSubscribers(t testing.TB, rdb rueidis.Client, channel string) int64 {
	t.Helper()
	var n int64
	for _, node := range rdb.Nodes() {
		m, err := node.Do(t.Context(), node.B().PubsubShardnumsub().Channel(channel).Build()).AsIntMap()
		if err != nil {
			t.Fatalf("PUBSUB SHARDNUMSUB %s: %v", channel, err)
		}
		n += m[channel]
	}
	return n
}
