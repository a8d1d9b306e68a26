package store_test

import (
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestFleetReportsLapse: a process that stops reporting drops out of the
// fleet when its report expires, and the next report forgets its id.
func TestFleetReportsLapse(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	s := store.New(rdb, testkit.Prefix(t), nil)
	ctx := t.Context()
	if err := s.Report(ctx, "q", store.Member{ID: "short", Concurrency: 1}, 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := s.Report(ctx, "q", store.Member{ID: "long", Concurrency: 2, RateN: 5, RatePerMs: 1000}, time.Minute); err != nil {
		t.Fatal(err)
	}
	members, leader, err := s.Fleet(ctx, "q")
	if err != nil || len(members) != 2 || leader != "" {
		t.Fatalf("Fleet = %+v, %q, %v; want 2 members, no leader", members, leader, err)
	}
	if m := members[0]; m.ID != "long" || m.Concurrency != 2 || m.RateN != 5 || m.RatePerMs != 1000 {
		t.Errorf("first member %+v, want long's report", m)
	}
	lapsed := testkit.RedisNow(t, rdb) + 100 // the short report's end on the Redis clock, or later
	testkit.Eventually(t, 5*time.Second, "the short report to lapse", func() bool { return testkit.RedisNow(t, rdb) > lapsed })
	members, _, err = s.Fleet(ctx, "q")
	if err != nil || len(members) != 1 || members[0].ID != "long" {
		t.Fatalf("Fleet after the short report lapsed = %+v, %v", members, err)
	}
	if err := s.Report(ctx, "q", store.Member{ID: "long", Concurrency: 2}, time.Minute); err != nil {
		t.Fatal(err)
	}
	ids, err := rdb.Do(ctx, rdb.B().Smembers().Key(s.Keys("q").Fleet).Build()).AsStrSlice()
	if err != nil || len(ids) != 1 || ids[0] != "long" {
		t.Errorf("fleet set %v, %v after a report; want the lapsed id forgotten", ids, err)
	}
	if err := s.Withdraw(ctx, "q", "long"); err != nil {
		t.Fatal(err)
	}
	if members, _, err := s.Fleet(ctx, "q"); err != nil || len(members) != 0 {
		t.Errorf("Fleet after Withdraw = %+v, %v", members, err)
	}
}

// TestFleetForgetsCrashedMembers: in a queue no live process reports to,
// the ids of processes that died without withdrawing are forgotten when the
// fleet is read, so the set does not keep them forever.
func TestFleetForgetsCrashedMembers(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	s := store.New(rdb, testkit.Prefix(t), nil)
	ctx := t.Context()
	if err := s.Report(ctx, "q", store.Member{ID: "crashed", Concurrency: 1}, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 5*time.Second, "the report to lapse", func() bool { return !testkit.Exists(t, rdb, s.Keys("q").Fleet+":crashed") })
	if members, _, err := s.Fleet(ctx, "q"); err != nil || len(members) != 0 {
		t.Fatalf("Fleet = %+v, %v; want no member", members, err)
	}
	if testkit.Exists(t, rdb, s.Keys("q").Fleet) {
		t.Error("the fleet set still holds the crashed process's id")
	}
}
