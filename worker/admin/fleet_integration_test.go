package admin_test

import (
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
)

func TestFleetReportsEveryDaemon(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := workertest.Config(t, prefix)
		c := workertest.NewClient(t, rdb, cfg)
		limit := worker.RateLimit{N: 50, Per: time.Second}
		a := workertest.StartDaemon(t, rdb, workertest.Register(t, nil, "f", worker.HandlerFunc(workertest.Succeed), worker.QueueOptions{Concurrency: 3, RateLimit: limit}), cfg)
		b := workertest.StartDaemon(t, rdb, workertest.Register(t, nil, "f", worker.HandlerFunc(workertest.Succeed), worker.QueueOptions{Concurrency: 5, RateLimit: limit}), cfg)
		if a.ID() == b.ID() {
			t.Fatalf("two daemons share the id %q", a.ID())
		}

		var f admin.Fleet
		testkit.Eventually(t, 5*time.Second, "both daemons and a leader in the fleet", func() bool {
			var err error
			f, err = c.Fleet(t.Context(), "f")
			return err == nil && len(f.Processes) == 2 && f.Leader != ""
		})
		if f.Concurrency() != 8 {
			t.Errorf("fleet concurrency %d, want 3+5", f.Concurrency())
		}
		leaders := 0
		for _, p := range f.Processes {
			if p.ID != a.ID() && p.ID != b.ID() {
				t.Errorf("unknown process %q in the fleet", p.ID)
			}
			if p.RateLimit != limit {
				t.Errorf("process %s rate limit %v, want %v", p.ID, p.RateLimit, limit)
			}
			if p.Leader {
				leaders++
				if p.ID != f.Leader {
					t.Errorf("process %s marked leader, but the leader is %s", p.ID, f.Leader)
				}
			}
			if time.Since(p.ReportedAt) > time.Minute {
				t.Errorf("process %s reported at %v", p.ID, p.ReportedAt)
			}
		}
		if leaders != 1 {
			t.Errorf("%d processes marked leader, want 1: %+v", leaders, f)
		}

		// A stopped daemon leaves the fleet at once.
		if err := a.Stop(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 5*time.Second, "the stopped daemon to leave and the other to lead", func() bool {
			f, err := c.Fleet(t.Context(), "f")
			return err == nil && len(f.Processes) == 1 && f.Processes[0].ID == b.ID() && f.Leader == b.ID() && f.Processes[0].Leader
		})
		if _, err := c.Fleet(t.Context(), "bad{queue}"); err == nil {
			t.Error("Fleet of an invalid queue name succeeded")
		}
		if f, err := c.Fleet(t.Context(), "nobody"); err != nil || len(f.Processes) != 0 || f.Leader != "" {
			t.Errorf("Fleet of an unserved queue = %+v, %v", f, err)
		}
	})
}

// TestFleetShowsVersionStartScheduleAndLeaderTTL: a Daemon serving two
// queues reports its Config.Version, its start time and, on the queue that
// has them, the names of its periodic schedules; the fleet of a queue it
// leads carries the time left on the leader lock.
func TestFleetShowsVersionStartScheduleAndLeaderTTL(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := workertest.Config(t, prefix)
		cfg.Version = "v-test"
		c := workertest.NewClient(t, rdb, cfg)
		reg := workertest.Register(t, nil, "plain", worker.HandlerFunc(workertest.Succeed), worker.QueueOptions{Concurrency: 2})
		workertest.Register(t, reg, "timed", worker.HandlerFunc(workertest.Succeed), worker.QueueOptions{Concurrency: 1, Periodic: []worker.Periodic{
			{Name: "tick", Every: time.Hour}, {Name: "nightly", Cron: "0 3 * * *"},
		}})
		before := time.Now()
		d := workertest.StartDaemon(t, rdb, reg, cfg)

		fleets := map[string]admin.Fleet{}
		testkit.Eventually(t, 5*time.Second, "the daemon to report to and lead both queues", func() bool {
			for _, q := range []string{"plain", "timed"} {
				f, err := c.Fleet(t.Context(), q)
				if err != nil || len(f.Processes) != 1 || f.Leader != d.ID() {
					return false
				}
				fleets[q] = f
			}
			return true
		})
		after := time.Now()
		for q, want := range map[string][]string{"plain": nil, "timed": {"nightly", "tick"}} {
			f := fleets[q]
			p := f.Processes[0]
			if p.Version != "v-test" {
				t.Errorf("%s: Version %q, want v-test", q, p.Version)
			}
			if p.StartedAt.Before(before.Truncate(time.Millisecond)) || p.StartedAt.After(after) {
				t.Errorf("%s: StartedAt %v, want within [%v, %v]", q, p.StartedAt, before, after)
			}
			if !slices.Equal(p.Periodic, want) {
				t.Errorf("%s: Periodic %q, want %q", q, p.Periodic, want)
			}
			if f.LeaderTTL <= 0 || f.LeaderTTL > worker.LeaderLeaseDefault {
				t.Errorf("%s: LeaderTTL %s, want in (0, %s]", q, f.LeaderTTL, worker.LeaderLeaseDefault)
			}
		}
		if f, err := c.Fleet(t.Context(), "unknown"); err != nil || f.LeaderTTL != 0 || f.Leader != "" {
			t.Errorf("Fleet of an unknown queue = %+v, %v; want no leader and no TTL", f, err)
		}
	})
}

// TestFleetReadsOldReports: a report written by a process of an older
// version, without version, start time and schedules, is still read.
func TestFleetReadsOldReports(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		fleet := queueKey(prefix, "old", "fleet")
		testkit.Do(t, rdb, rdb.B().Set().Key(fleet+":p-old").Value(`{"id":"p-old","concurrency":4,"reported":"2026-01-02T03:04:05Z"}`).Px(time.Minute).Build())
		testkit.Do(t, rdb, rdb.B().Sadd().Key(fleet).Member("p-old").Build())
		f, err := c.Fleet(t.Context(), "old")
		if err != nil || len(f.Processes) != 1 {
			t.Fatalf("Fleet = %+v, %v; want the old report", f, err)
		}
		p := f.Processes[0]
		if p.ID != "p-old" || p.Concurrency != 4 || p.Version != "" || !p.StartedAt.IsZero() || p.Periodic != nil {
			t.Errorf("old report read as %+v", p)
		}
		if st, err := c.Periodic(t.Context(), "old"); err != nil || len(st) != 0 {
			t.Errorf("Periodic with an old report alone = %+v, %v; want none", st, err)
		}
	})
}

// queueKey is the Redis key name of one of queue's keys under prefix
// (store.QueueKeys' layout), for tests that write what another process
// would have.
func queueKey(prefix, queue, name string) string { return prefix + ":{" + queue + "}:" + name }
