package limiter

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
)

// TestBackendContract runs one table of cases against fakeRedis and against
// redisBackend (the limiter scripts) on single Redis and Redis Cluster: the
// fake drives the synctest tests, so it is trusted only as far as it
// answers as the scripts do. The cases compare what backend calls return,
// never how a backend stores a limit.
func TestBackendContract(t *testing.T) {
	t.Parallel()
	targets := []struct {
		name string
		open func(t *testing.T) backend
	}{
		{"fake", func(*testing.T) backend { return newFakeRedis() }},
		{"single", func(t *testing.T) backend {
			return redisBackend{c: script.NewConn(testkit.Single(t), nil), plain: new(atomic.Bool)}
		}},
		{"cluster", func(t *testing.T) backend {
			return redisBackend{c: script.NewConn(testkit.Cluster(t), nil), plain: new(atomic.Bool)}
		}},
	}
	for _, target := range targets {
		t.Run(target.name, func(t *testing.T) {
			t.Parallel()
			b := target.open(t) // one client for all cases, as one process has
			for _, tc := range contractCases() {
				t.Run(tc.name, func(t *testing.T) {
					t.Parallel()
					p := testkit.Prefix(t)
					tc.run(t, b, p+":{limiter:x}:slots", p+":{limiter:x}:rate", p+":{limiter:x}:free")
				})
			}
		})
	}
}

type contractCase struct {
	name string
	run  func(t *testing.T, b backend, slots, rate, channel string)
}

// slack is how far a reply's time may be from the one expected: the round
// trips between the calls, on a loaded machine.
const slack = 2 * time.Second

func near(got, want time.Time) bool { d := got.Sub(want); return d > -slack && d < slack }

func mustReply(t *testing.T, what string, r reply, err error, ok bool, n int) reply {
	t.Helper()
	if err != nil || r.ok != ok || r.n != n {
		t.Fatalf("%s = %+v, %v; want ok %v, n %d", what, r, err, ok, n)
	}
	return r
}

func contractCases() []contractCase {
	return []contractCase{
		{"max slots, then refused with the earliest lease", func(t *testing.T, b backend, slots, _, _ string) {
			ctx := t.Context()
			r, err := b.acquire(ctx, slots, "h1", 2, time.Minute)
			mustReply(t, "acquire h1", r, err, true, 1)
			if !near(r.at, time.Now().Add(time.Minute)) {
				t.Errorf("h1's deadline %v, want about a minute from now", time.Until(r.at))
			}
			r, err = b.acquire(ctx, slots, "h2", 2, 2*time.Minute)
			mustReply(t, "acquire h2", r, err, true, 2)
			r, err = b.acquire(ctx, slots, "h3", 2, time.Minute)
			mustReply(t, "acquire h3", r, err, false, 2)
			if !near(r.at, time.Now().Add(time.Minute)) {
				t.Errorf("h3 refused until %v from now, want about a minute (h1's lease)", time.Until(r.at))
			}
			// A caller with a larger max still fits.
			r, err = b.acquire(ctx, slots, "h3", 3, time.Minute)
			mustReply(t, "acquire h3 of 3", r, err, true, 3)
		}},
		{"the same holder again counts once", func(t *testing.T, b backend, slots, _, _ string) {
			r, err := b.acquire(t.Context(), slots, "h1", 1, time.Minute)
			mustReply(t, "acquire", r, err, true, 1)
			r, err = b.acquire(t.Context(), slots, "h1", 1, time.Hour)
			mustReply(t, "acquire again", r, err, true, 1)
			if !near(r.at, time.Now().Add(time.Hour)) {
				t.Errorf("deadline after the second run %v from now, want an hour", time.Until(r.at))
			}
		}},
		{"extend a held slot, not another's", func(t *testing.T, b backend, slots, _, _ string) {
			r, err := b.acquire(t.Context(), slots, "h1", 1, time.Minute)
			mustReply(t, "acquire", r, err, true, 1)
			if ok, err := b.extend(t.Context(), slots, "h1", time.Hour); !ok || err != nil {
				t.Fatalf("extend h1 = %v, %v; want held", ok, err)
			}
			r, err = b.acquire(t.Context(), slots, "h2", 1, time.Minute)
			mustReply(t, "acquire h2", r, err, false, 1)
			if !near(r.at, time.Now().Add(time.Hour)) {
				t.Errorf("refused until %v from now, want an hour (the extended lease)", time.Until(r.at))
			}
			if ok, err := b.extend(t.Context(), slots, "h2", time.Hour); ok || err != nil {
				t.Fatalf("extend of a holder that holds nothing = %v, %v; want not held", ok, err)
			}
		}},
		{"an expired holder frees its slot and is not revived", func(t *testing.T, b backend, slots, _, channel string) {
			r, err := b.acquire(t.Context(), slots, "h1", 1, 50*time.Millisecond)
			mustReply(t, "acquire", r, err, true, 1)
			<-time.After(100 * time.Millisecond)
			r, err = b.acquire(t.Context(), slots, "h2", 1, time.Minute)
			mustReply(t, "acquire after h1's lease", r, err, true, 1)
			if ok, err := b.extend(t.Context(), slots, "h1", time.Minute); ok || err != nil {
				t.Fatalf("extend of an expired holder = %v, %v; want not held", ok, err)
			}
			if ok, err := b.release(t.Context(), slots, channel, "h1"); ok || err != nil {
				t.Fatalf("release of an expired holder = %v, %v; want not held", ok, err)
			}
		}},
		{"release frees the slot and tells once", func(t *testing.T, b backend, slots, _, channel string) {
			var msgs atomic.Int64
			live := make(chan struct{}, 1)
			go func() {
				_ = b.subscribe(t.Context(), channel, func() {
					select {
					case live <- struct{}{}:
					default:
					}
				}, func() { msgs.Add(1) })
			}()
			select {
			case <-live:
			case <-time.After(10 * time.Second):
				t.Fatal("subscription not confirmed")
			}
			r, err := b.acquire(t.Context(), slots, "h1", 1, time.Minute)
			mustReply(t, "acquire", r, err, true, 1)
			if ok, err := b.release(t.Context(), slots, channel, "h1"); !ok || err != nil {
				t.Fatalf("release = %v, %v; want released", ok, err)
			}
			if ok, err := b.release(t.Context(), slots, channel, "h1"); ok || err != nil {
				t.Fatalf("second release = %v, %v; want not held", ok, err)
			}
			r, err = b.acquire(t.Context(), slots, "h2", 1, time.Minute)
			mustReply(t, "acquire after the release", r, err, true, 1)
			testkit.Eventually(t, 10*time.Second, "the release message", func() bool { return msgs.Load() == 1 })
			<-time.After(100 * time.Millisecond)
			if n := msgs.Load(); n != 1 {
				t.Errorf("%d messages, want 1 (the second release freed nothing)", n)
			}
		}},
		{"take n in the window, then refused until the oldest leaves", func(t *testing.T, b backend, _, rate, _ string) {
			ctx := t.Context()
			start := time.Now()
			r, err := b.take(ctx, rate, 3, time.Minute, 1)
			mustReply(t, "take 1", r, err, true, 2)
			r, err = b.take(ctx, rate, 3, time.Minute, 2)
			mustReply(t, "take 2", r, err, true, 0)
			r, err = b.take(ctx, rate, 3, time.Minute, 1)
			mustReply(t, "a fourth", r, err, false, 0)
			if !near(r.at, start.Add(time.Minute)) {
				t.Errorf("refused until %v after the first take, want a minute", r.at.Sub(start))
			}
			// A caller with a larger n has room left.
			r, err = b.take(ctx, rate, 5, time.Minute, 2)
			mustReply(t, "take 2 of 5", r, err, true, 0)
			r, err = b.take(ctx, rate, 5, time.Minute, 1)
			mustReply(t, "a sixth of 5", r, err, false, 0)
		}},
		{"k units wait for enough takes to leave", func(t *testing.T, b backend, _, rate, _ string) {
			ctx := t.Context()
			r, err := b.take(ctx, rate, 4, 300*time.Millisecond, 1)
			mustReply(t, "take 1", r, err, true, 3)
			<-time.After(100 * time.Millisecond)
			second := time.Now()
			r, err = b.take(ctx, rate, 4, 300*time.Millisecond, 3)
			mustReply(t, "take 3", r, err, true, 0)
			r, err = b.take(ctx, rate, 4, 300*time.Millisecond, 2)
			mustReply(t, "take 2", r, err, false, 0)
			// Two units need both takes to leave: the second's time.
			if d := r.at.Sub(second.Add(300 * time.Millisecond)); d < -50*time.Millisecond || d > slack {
				t.Errorf("refused until %v after the second take, want 300ms", r.at.Sub(second))
			}
			<-time.After(time.Until(r.at) + 10*time.Millisecond)
			r, err = b.take(ctx, rate, 4, 300*time.Millisecond, 2)
			mustReply(t, "take 2 when both left", r, err, true, 2)
		}},
	}
}
