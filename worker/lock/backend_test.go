package lock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// TestBackendContract runs one table of cases against fakeRedis and against
// redisBackend (the lock scripts) on single Redis and Redis Cluster: the
// fake drives the synctest tests, so it is trusted only as far as it
// answers as the scripts do. The cases compare what backend calls return,
// never how a backend stores a lock.
func TestBackendContract(t *testing.T) {
	t.Parallel()
	targets := []struct {
		name string
		open func(t *testing.T) contractTarget
	}{
		{"fake", func(*testing.T) contractTarget {
			f := newFakeRedis()
			return contractTarget{f, func(_ *testing.T, name, field string) {
				f.set(func(f *fakeRedis) { f.locks[name] = &fakeLock{fields: map[string]int{field: 1}} })
			}}
		}},
		{"single", func(t *testing.T) contractTarget { return redisTarget(testkit.Single(t)) }},
		{"cluster", func(t *testing.T) contractTarget { return redisTarget(testkit.Cluster(t)) }},
	}
	for _, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			b := target.open(t) // one client for all cases, as one process has
			for _, tc := range contractCases() {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					tc.run(t, b, testkit.Prefix(t)+":lock")
				})
			}
		})
	}
}

// contractTarget is a backend under the contract, with a way to plant
// what the backend interface cannot make: a hold without a TTL, as a
// client that set no lease (or a PERSIST) leaves it.
type contractTarget struct {
	backend
	holdForever func(t *testing.T, name, field string)
}

// redisTarget is redisBackend on rdb.
func redisTarget(rdb rueidis.Client) contractTarget {
	return contractTarget{redisBackend{c: script.NewConn(rdb, nil)}, func(t *testing.T, name, field string) {
		testkit.Do(t, rdb, rdb.B().Hset().Key(name).FieldValue().FieldValue(field, "1").Build())
	}}
}

type contractCase struct {
	name string
	run  func(t *testing.T, b contractTarget, name string)
}

const (
	holderField   = "uuid-1:holder"
	strangerField = "uuid-2:stranger"
	contractLease = time.Minute
	// ttlSlack is how much of a lease the round trips between setting it
	// and reading it back may take on a loaded machine.
	ttlSlack = 2 * time.Second
)

// contractCases are the cases every target must pass; each gets a lock
// name of its own.
func contractCases() []contractCase {
	return []contractCase{
		{"acquire a free lock", func(t *testing.T, b contractTarget, name string) {
			ok, ttl, err := b.acquire(t.Context(), name, holderField, contractLease)
			if !ok || ttl != 0 || err != nil {
				t.Fatalf("acquire = %v, ttl %v, %v; want taken", ok, ttl, err)
			}
			expectRelease(t, b, name, holderField, releaseDeleted) // one hold
		}},
		{"re-enter by the same field", func(t *testing.T, b contractTarget, name string) {
			take(t, b, name, holderField, contractLease)
			take(t, b, name, holderField, contractLease)
			expectRelease(t, b, name, holderField, releaseDecremented) // count 2 → 1
			expectRelease(t, b, name, holderField, releaseDeleted)
		}},
		{"another field refused with the TTL", func(t *testing.T, b contractTarget, name string) {
			take(t, b, name, holderField, contractLease)
			expectTTL(t, b, name, contractLease)
			expectRelease(t, b, name, holderField, releaseDeleted) // the refusal left the count at 1
		}},
		{"a lock without TTL reports a negative TTL", func(t *testing.T, b contractTarget, name string) {
			b.holdForever(t, name, holderField)
			ok, ttl, err := b.acquire(t.Context(), name, strangerField, contractLease)
			if ok || ttl >= 0 || err != nil {
				t.Fatalf("acquire by another field = %v, ttl %v, %v; want refused with a negative TTL", ok, ttl, err)
			}
			expectRelease(t, b, name, holderField, releaseDeleted)
		}},
		{"release decrements, then deletes and publishes", func(t *testing.T, b contractTarget, name string) {
			channel := Channel(name)
			unlocks := subscribeCount(t, b, channel)
			take(t, b, name, holderField, contractLease)
			take(t, b, name, holderField, contractLease)
			expectRelease(t, b, name, holderField, releaseDecremented)
			// A message travels asynchronously from Redis: this catches one
			// the decrement published only when it arrives early.
			if n := unlocks.Load(); n != 0 {
				t.Fatalf("%d unlock messages after a release that left a hold, want none", n)
			}
			expectTTL(t, b, name, contractLease) // still held: the lease was reset
			expectRelease(t, b, name, holderField, releaseDeleted)
			testkit.Eventually(t, 10*time.Second, "the unlock message on "+channel, func() bool { return unlocks.Load() >= 1 })
			take(t, b, name, strangerField, contractLease) // deleted: free for anyone
			if n := unlocks.Load(); n != 1 {
				t.Errorf("%d unlock messages, want 1", n)
			}
		}},
		{"release by a stranger", func(t *testing.T, b contractTarget, name string) {
			unlocks := subscribeCount(t, b, Channel(name))
			take(t, b, name, holderField, contractLease)
			// A short lease in the stranger's call shows whether it reset the
			// holderField's.
			res, err := b.release(t.Context(), name, Channel(name), strangerField, time.Second)
			if res != releaseNotHeld || err != nil {
				t.Fatalf("release by another field = %v, %v; want releaseNotHeld", res, err)
			}
			expectTTL(t, b, name, contractLease)
			expectRelease(t, b, name, holderField, releaseDeleted) // the count was left at 1
			testkit.Eventually(t, 10*time.Second, "the holder's unlock message", func() bool { return unlocks.Load() >= 1 })
			if n := unlocks.Load(); n != 1 {
				t.Errorf("%d unlock messages, want only the holder's", n)
			}
		}},
		{"renew holder, stranger and absent lock in one call", func(t *testing.T, b contractTarget, name string) {
			take(t, b, name, holderField, contractLease)
			got := b.renew(t.Context(), 2*contractLease, []lockRef{{name, holderField}, {name, strangerField}, {name + ":absent", holderField}})
			if len(got) != 3 {
				t.Fatalf("renew returned %d results for 3 locks", len(got))
			}
			for i, want := range []bool{true, false, false} {
				if got[i].held != want || got[i].err != nil {
					t.Errorf("renew result %d = %+v, want held %v", i, got[i], want)
				}
			}
			expectTTL(t, b, name, 2*contractLease)
			take(t, b, name+":absent", strangerField, contractLease) // renewing created nothing
			expectRelease(t, b, name, holderField, releaseDeleted)
		}},
		{"a lease of 0 refused", func(t *testing.T, b contractTarget, name string) {
			take(t, b, name, holderField, contractLease)
			// PEXPIRE 0 would delete the lock: refused before any write, held
			// or not.
			for _, field := range []string{holderField, strangerField} {
				if ok, _, err := b.acquire(t.Context(), name, field, 0); ok || err == nil {
					t.Errorf("acquire by %s with lease 0 = %v, %v; want an error", field, ok, err)
				}
				if res, err := b.release(t.Context(), name, Channel(name), field, 0); err == nil {
					t.Errorf("release by %s with lease 0 = %v; want an error", field, res)
				}
			}
			if got := b.renew(t.Context(), 0, []lockRef{{name, holderField}, {name + ":absent", holderField}}); got[0].err == nil || got[1].err == nil {
				t.Errorf("renew with lease 0 = %+v; want an error for each lock", got)
			}
			if ok, _, err := b.acquire(t.Context(), name+":free", holderField, 0); ok || err == nil {
				t.Errorf("acquire of a free lock with lease 0 = %v, %v; want an error", ok, err)
			}
			expectTTL(t, b, name, contractLease)
			expectRelease(t, b, name, holderField, releaseDeleted)
			take(t, b, name+":free", strangerField, contractLease)
		}},
		{"the lock is free once its lease passes", func(t *testing.T, b contractTarget, name string) {
			const short = 100 * time.Millisecond
			start := time.Now()
			take(t, b, name, holderField, short)
			testkit.Eventually(t, 10*time.Second, "the lease to pass", func() bool {
				ok, _, err := b.acquire(t.Context(), name, strangerField, contractLease)
				if err != nil {
					t.Fatalf("acquire: %v", err)
				}
				return ok
			})
			if took := time.Since(start); took < short {
				t.Errorf("the lock was free %v after a lease of %v", took, short)
			}
			expectRelease(t, b, name, holderField, releaseNotHeld)
			expectRelease(t, b, name, strangerField, releaseDeleted)
		}},
	}
}

// take acquires name for field and fails unless it was taken.
func take(t *testing.T, b backend, name, field string, lease time.Duration) {
	t.Helper()
	if ok, ttl, err := b.acquire(t.Context(), name, field, lease); !ok || err != nil {
		t.Fatalf("acquire %s by %s = %v, ttl %v, %v; want taken", name, field, ok, ttl, err)
	}
}

// expectTTL fails unless another field is refused name with a TTL just
// under want.
func expectTTL(t *testing.T, b backend, name string, want time.Duration) {
	t.Helper()
	ok, ttl, err := b.acquire(t.Context(), name, "uuid-3:prober", contractLease)
	if ok || err != nil || ttl > want || ttl < want-ttlSlack {
		t.Fatalf("acquire by another field = %v, ttl %v, %v; want refused with a TTL in [%v, %v]", ok, ttl, err, want-ttlSlack, want)
	}
}

// expectRelease releases name for field and fails unless the release did
// what want says.
func expectRelease(t *testing.T, b backend, name, field string, want releaseResult) {
	t.Helper()
	if got, err := b.release(t.Context(), name, Channel(name), field, contractLease); got != want || err != nil {
		t.Fatalf("release %s by %s = %v, %v; want %v", name, field, got, err, want)
	}
}

// subscribeCount subscribes to channel through b until the test ends and
// returns the number of messages received; it returns once the
// subscription is confirmed.
func subscribeCount(t *testing.T, b backend, channel string) *atomic.Int64 {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var n atomic.Int64
	subscribed := make(chan struct{}, 1)
	done := make(chan error, 1)
	go func() {
		done <- b.subscribe(ctx, channel, func() {
			select {
			case subscribed <- struct{}{}:
			default: // a resubscription
			}
		}, func() { n.Add(1) })
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	select {
	case <-subscribed:
	case err := <-done:
		t.Fatalf("subscribe %s: %v", channel, err)
	case <-time.After(10 * time.Second):
		t.Fatalf("subscribe %s: not confirmed within 10s", channel)
	}
	return &n
}
