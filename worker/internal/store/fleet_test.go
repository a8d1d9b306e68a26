package store_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

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

// TestFleetInfoReportsAndLeaderTTL: a report carries the version, start
// time and schedules back as written, and FleetInfo reads the leader lock's
// holder and PTTL with the fleet set: 0 when no process leads, even while
// the lock's key exists without a leader field.
func TestFleetInfoReportsAndLeaderTTL(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		started := time.UnixMilli(1_700_000_000_123).UTC()
		m := store.Member{ID: "p1", Concurrency: 4, Version: "v1.2.3", Started: started, Periodic: []store.MemberSchedule{
			{Name: "a", EveryMs: 60_000}, {Name: "b", Cron: "*/5 * * * *"},
		}}
		if err := s.Report(ctx, queue, m, time.Minute); err != nil {
			t.Fatal(err)
		}
		f, err := s.FleetInfo(ctx, queue)
		if err != nil || len(f.Members) != 1 || f.LeaderID != "" || f.LeaderTTL != 0 {
			t.Fatalf("FleetInfo = %+v, %v; want p1, no leader, no TTL", f, err)
		}
		got := f.Members[0]
		if got.Version != m.Version || !got.Started.Equal(started) || !slices.Equal(got.Periodic, m.Periodic) {
			t.Errorf("member %+v, want %+v", got, m)
		}

		// A key without a leader field (another holder) leads nothing.
		do(t, c, c.B().Hset().Key(k.Leader).FieldValue().FieldValue("x:other", "1").Build())
		do(t, c, c.B().Pexpire().Key(k.Leader).Milliseconds(10_000).Build())
		if f, err := s.FleetInfo(ctx, queue); err != nil || f.LeaderID != "" || f.LeaderTTL != 0 {
			t.Errorf("FleetInfo with no leader field = %+v, %v; want no leader, no TTL", f, err)
		}
		do(t, c, c.B().Hset().Key(k.Leader).FieldValue().FieldValue("p1:leader", "1").Build())
		f, err = s.FleetInfo(ctx, queue)
		if err != nil || f.LeaderID != "p1" || !f.Members[0].Leader {
			t.Fatalf("FleetInfo = %+v, %v; want p1 leading", f, err)
		}
		if f.LeaderTTL <= 0 || f.LeaderTTL > 10*time.Second {
			t.Errorf("LeaderTTL %s, want in (0, 10s]", f.LeaderTTL)
		}
		// Fleet is FleetInfo's members and leader.
		if members, leader, err := s.Fleet(ctx, queue); err != nil || len(members) != 1 || leader != "p1" {
			t.Errorf("Fleet = %+v, %q, %v", members, leader, err)
		}
	})
}

// TestReportOldFormatDecodes: reports of an older version (without
// version, started and periodic) and of a newer one (with fields this one
// does not know) are both read, during a rolling upgrade.
func TestReportOldFormatDecodes(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		for id, report := range map[string]string{
			"old": `{"id":"old","concurrency":2,"rate_n":5,"rate_per_ms":1000,"reported":"2026-01-02T03:04:05Z"}`,
			"new": `{"id":"new","concurrency":3,"reported":"2026-01-02T03:04:05Z","version":"v9","future":{"x":1},"periodic":[{"name":"a","every_ms":1000,"jitter_ms":5}]}`,
		} {
			do(t, c, c.B().Set().Key(k.Fleet+":"+id).Value(report).Px(time.Minute).Build())
			do(t, c, c.B().Sadd().Key(k.Fleet).Member(id).Build())
		}
		members, _, err := s.Fleet(ctx, queue)
		if err != nil || len(members) != 2 {
			t.Fatalf("Fleet = %+v, %v; want both reports", members, err)
		}
		n, o := members[0], members[1]
		if o.ID != "old" || o.Concurrency != 2 || o.RateN != 5 || o.Version != "" || !o.Started.IsZero() || o.Periodic != nil {
			t.Errorf("old report read as %+v", o)
		}
		if n.ID != "new" || n.Version != "v9" || len(n.Periodic) != 1 || n.Periodic[0] != (store.MemberSchedule{Name: "a", EveryMs: 1000}) {
			t.Errorf("newer report read as %+v", n)
		}
	})
}

// TestReportIsSmall: the new fields are left out of a report when empty,
// so an old-style member's report is as small as before.
func TestReportIsSmall(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	s := store.New(rdb, testkit.Prefix(t), nil)
	if err := s.Report(t.Context(), queue, store.Member{ID: "p", Concurrency: 1}, time.Minute); err != nil {
		t.Fatal(err)
	}
	v, err := rdb.Do(t.Context(), rdb.B().Get().Key(s.Keys(queue).Fleet+":p").Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"version", "started", "periodic"} {
		if strings.Contains(v, `"`+field+`"`) {
			t.Errorf("report %s has the empty field %q", v, field)
		}
	}
}

// TestFleetSchedulesReadLastFires: Schedules returns the live reports and
// the periodic hash's last fires, leaving out a field that is not a time.
func TestFleetSchedulesReadLastFires(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		if members, last, err := s.Schedules(ctx, queue); err != nil || len(members) != 0 || len(last) != 0 {
			t.Fatalf("Schedules of an empty queue = %+v, %v, %v", members, last, err)
		}
		m := store.Member{ID: "p", Concurrency: 1, Periodic: []store.MemberSchedule{{Name: "a", EveryMs: 1000}}}
		if err := s.Report(ctx, queue, m, time.Minute); err != nil {
			t.Fatal(err)
		}
		do(t, c, c.B().Hset().Key(k.Periodic).FieldValue().FieldValue("a", "1700000000000").FieldValue("junk", "x").Build())
		members, last, err := s.Schedules(ctx, queue)
		if err != nil || len(members) != 1 || len(members[0].Periodic) != 1 {
			t.Fatalf("Schedules = %+v, %v, %v", members, last, err)
		}
		if len(last) != 1 || !last["a"].Equal(time.UnixMilli(1_700_000_000_000)) {
			t.Errorf("last fires %v, want a at 1700000000000 ms alone", last)
		}
	})
}
