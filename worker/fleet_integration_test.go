package worker_test

import (
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

func TestFleetReportsEveryDaemon(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		limit := worker.RateLimit{N: 50, Per: time.Second}
		a := startDaemon(t, rdb, register(t, nil, "f", worker.HandlerFunc(succeed), worker.QueueOptions{Concurrency: 3, RateLimit: limit}), cfg)
		b := startDaemon(t, rdb, register(t, nil, "f", worker.HandlerFunc(succeed), worker.QueueOptions{Concurrency: 5, RateLimit: limit}), cfg)
		if a.ID() == b.ID() {
			t.Fatalf("two daemons share the id %q", a.ID())
		}

		var f worker.Fleet
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
		if err := a.stop(t, 10*time.Second); err != nil {
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
