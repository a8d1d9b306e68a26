package limiter_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/limiter"
)

// TestScriptsRejectBadArguments calls the limiter scripts raw, with
// arguments the Limiter never sends: each refuses before its first write
// (Lua does not roll back), so a held slot and a window's take stay as
// they were.
func TestScriptsRejectBadArguments(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, connect func(testing.TB) rueidis.Client) {
		rdb := connect(t)
		prefix := testkit.Prefix(t)
		l := newLimiter(t, rdb, limiter.Options{Prefix: prefix})
		slot, err := l.Acquire(t.Context(), "api", 1, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if ok, _, err := l.Take(t.Context(), "api", 1, time.Hour); !ok || err != nil {
			t.Fatalf("Take: %v, %v", ok, err)
		}
		slots, rate, channel := slotsKey(prefix, "api"), prefix+":{limiter:api}:rate", prefix+":{limiter:api}:free"
		deadline, _ := testkit.ZScore(t, rdb, slots, slot.Holder())
		// A key in the window's place holding something else, still in
		// the window (rate.lua drops what has left it unread).
		junk := prefix + ":{limiter:api}:junk"
		testkit.Do(t, rdb, rdb.B().Zadd().Key(junk).ScoreMember().ScoreMember(9e15, "junk").Build())
		c := script.NewConn(rdb, nil)
		long := strings.Repeat("h", 257)
		for _, tc := range []struct {
			s    *script.Script
			key  string
			args []string
			want string
		}{
			{script.LimiterAcquire, slots, []string{"0", "1000", "h2"}, "max must be 1 to 1000000"},
			{script.LimiterAcquire, slots, []string{"1.5", "1000", "h2"}, "max must be 1 to 1000000"},
			{script.LimiterAcquire, slots, []string{"1000001", "1000", "h2"}, "max must be 1 to 1000000"},
			{script.LimiterAcquire, slots, []string{"2", "0", "h2"}, "lease_ms must be 1 to 31622400000"},
			{script.LimiterAcquire, slots, []string{"2", "-5", "h2"}, "lease_ms must be 1 to 31622400000"},
			{script.LimiterAcquire, slots, []string{"2", "1000"}, "the holder must be 1 to 256 bytes"},
			{script.LimiterAcquire, slots, []string{"2", "1000", long}, "the holder must be 1 to 256 bytes"},
			{script.LimiterExtend, slots, []string{"0", slot.Holder()}, "lease_ms must be 1 to 31622400000"},
			{script.LimiterExtend, slots, []string{"x", slot.Holder()}, "lease_ms must be 1 to 31622400000"},
			{script.LimiterExtend, slots, []string{"1000", ""}, "the holder must be 1 to 256 bytes"},
			{script.LimiterRelease, slots, []string{channel, ""}, "the holder must be 1 to 256 bytes"},
			{script.LimiterRelease, slots, []string{"", slot.Holder()}, "release needs the free channel"},
			{script.LimiterTake, rate, []string{"0", "1000", "1"}, "rate_ms without rate_n"},
			{script.LimiterTake, rate, []string{"0", "0", "1"}, "rate_n must be 1 to 1000000"},
			{script.LimiterTake, rate, []string{"", "", "1"}, "rate_n must be 1 to 1000000"},
			{script.LimiterTake, rate, []string{"5", "0", "1"}, "rate_ms must be 1 to 31622400000"},
			{script.LimiterTake, rate, []string{"5", "1000", "0"}, "k must be 1 to rate_n"},
			{script.LimiterTake, rate, []string{"5", "1000", "6"}, "k must be 1 to rate_n"},
			{script.LimiterTake, junk, []string{"5", "1000", "1"}, "the rate key holds an entry that is not a rate entry"},
		} {
			err := tc.s.Exec(t.Context(), c, []string{tc.key}, tc.args).Error()
			if err == nil || !strings.Contains(err.Error(), "courier: "+tc.want) {
				t.Errorf("%s %q: %v, want the refusal %q", tc.s.Name(), tc.args, err, tc.want)
			}
		}
		if got, ok := testkit.ZScore(t, rdb, slots, slot.Holder()); !ok || got != deadline {
			t.Errorf("the held slot's deadline is %d (%v), want %d unchanged", got, ok, deadline)
		}
		for key, want := range map[string]int64{slots: 1, rate: 1, junk: 1} {
			if n, err := rdb.Do(t.Context(), rdb.B().Zcard().Key(key).Build()).AsInt64(); n != want || err != nil {
				t.Errorf("ZCARD %s = %d, %v; want %d, unchanged", key, n, err, want)
			}
		}
	})
}

// TestSlotsWhileRedisIsFull: with Redis out of memory (maxmemory reached,
// noeviction) a held slot is still renewed, extended and released, so
// holders keep working and waiters are told; a new slot and a take are
// refused with Redis's OOM error, having written nothing.
func TestSlotsWhileRedisIsFull(t *testing.T) {
	t.Parallel()
	r := testkit.StartPrivate(t)
	rdb := r.Client(t)
	prefix := testkit.Prefix(t)
	l := newLimiter(t, rdb, limiter.Options{Prefix: prefix})
	const lease = 300 * time.Millisecond
	s, err := l.Acquire(t.Context(), "api", 2, lease)
	if err != nil {
		t.Fatal(err)
	}
	r.Fill(t)

	<-time.After(4 * lease) // the watchdog renews meanwhile
	if err := s.Context().Err(); err != nil {
		t.Fatalf("the slot ended while Redis is full: %v", context.Cause(s.Context()))
	}
	if err := s.Extend(t.Context(), time.Minute); err != nil {
		t.Fatalf("Extend while Redis is full: %v", err)
	}
	if _, _, err := l.TryAcquire(t.Context(), "api", 2, lease); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Errorf("TryAcquire while Redis is full = %v, want Redis's OOM refusal", err)
	}
	if _, _, err := l.Take(t.Context(), "api", 5, time.Second); err == nil || !strings.Contains(err.Error(), "OOM") {
		t.Errorf("Take while Redis is full = %v, want Redis's OOM refusal", err)
	}
	if err := s.Release(t.Context()); err != nil {
		t.Fatalf("Release while Redis is full: %v", err)
	}
	if testkit.Exists(t, rdb, slotsKey(prefix, "api")) || testkit.Exists(t, rdb, prefix+":{limiter:api}:rate") {
		t.Error("a refused call left a key")
	}
}
