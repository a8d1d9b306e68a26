package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestReportPrefix: a report lists the prefixes live before it and trims
// those not reported within the window, by the Redis clock. The key is
// shared by every test of the server, so the exact lists are checked on a
// Redis of the test's own.
func TestReportPrefix(t *testing.T) {
	t.Parallel()
	c := testkit.StartPrivate(t).Client(t)
	ctx := t.Context()
	a, b := store.New(c, "a", nil), store.New(c, "b:x", nil)
	if live, err := a.LivePrefixes(ctx, time.Minute); err != nil || len(live) != 0 {
		t.Fatalf("LivePrefixes of an empty Redis = %v, %v; want none", live, err)
	}
	now := testkit.RedisNow(t, c)
	testkit.Do(t, c, c.B().Zadd().Key(store.PrefixesKey).ScoreMember().
		ScoreMember(float64(now-2*time.Minute.Milliseconds()), "old").
		ScoreMember(float64(now-time.Second.Milliseconds()), "recent").Build())

	live, err := a.ReportPrefix(ctx, time.Minute)
	if err != nil || !slices.Equal(live, []string{"recent"}) {
		t.Fatalf("ReportPrefix(a) = %v, %v; want [recent] (old is past the window)", live, err)
	}
	if _, ok := testkit.ZScore(t, c, store.PrefixesKey, "old"); ok {
		t.Error("the report left the stale prefix in the key")
	}
	if score, ok := testkit.ZScore(t, c, store.PrefixesKey, "a"); !ok || score < now {
		t.Errorf("a's score = %d, %v; want the Redis clock, at least %d", score, ok, now)
	}
	if live, err := b.ReportPrefix(ctx, time.Minute); err != nil || !slices.Equal(live, []string{"a", "recent"}) {
		t.Errorf("ReportPrefix(b:x) = %v, %v; want [a recent]", live, err)
	}
	if live, err := a.ReportPrefix(ctx, time.Minute); err != nil || !slices.Equal(live, []string{"a", "b:x", "recent"}) {
		t.Errorf("ReportPrefix(a) again = %v, %v; want its own prefix too", live, err)
	}
	if live, err := b.LivePrefixes(ctx, 500*time.Millisecond); err != nil || !slices.Equal(live, []string{"a", "b:x"}) {
		t.Errorf("LivePrefixes(500ms) = %v, %v; want [a b:x] (recent is a second old)", live, err)
	}
}

// TestReportPrefixBackends: a prefix reported on a single Redis and on a
// Cluster is live at once (the key is one key in one slot).
func TestReportPrefixBackends(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *store.Store, c rueidis.Client) {
		prefix := testkit.Prefix(t)
		s := store.New(c, prefix, nil)
		if _, err := s.ReportPrefix(t.Context(), time.Minute); err != nil {
			t.Fatal(err)
		}
		live, err := s.LivePrefixes(t.Context(), time.Minute)
		if err != nil || !slices.Contains(live, prefix) {
			t.Errorf("LivePrefixes = %v, %v; want it to hold %q", live, err, prefix)
		}
	})
}
