package admin_test

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
)

// TestPeriodicStatus: Client.Periodic shows a queue's schedules as the
// daemon serving it reports them, with the next fire after now and the last
// fire once it fired; a schedule only the periodic hash remembers (written
// by hand, or one of a stopped daemon) keeps its last fire and has no schedule
// and no next fire.
func TestPeriodicStatus(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := workertest.Config(t, prefix)
		c := workertest.NewClient(t, rdb, cfg)
		reg := workertest.Register(t, nil, "timed", worker.HandlerFunc(workertest.Succeed), worker.QueueOptions{Periodic: []worker.Periodic{
			{Name: "tick", Every: time.Second}, {Name: "nightly", Cron: "0 3 * * *"},
		}})
		workertest.Register(t, reg, "plain", worker.HandlerFunc(workertest.Succeed), worker.QueueOptions{})
		// A schedule removed from the configuration an hour ago: the leader
		// forgets it only after a week without a fire.
		gone := time.UnixMilli(time.Now().Add(-time.Hour).UnixMilli())
		testkit.Do(t, rdb, rdb.B().Hset().Key(queueKey(prefix, "timed", "periodic")).FieldValue().FieldValue("gone", strconv.FormatInt(gone.UnixMilli(), 10)).Build())
		d := workertest.StartDaemon(t, rdb, reg, cfg)

		var st []admin.PeriodicStatus
		var asked time.Time
		testkit.Eventually(t, 10*time.Second, "tick to fire", func() bool {
			var err error
			asked = time.Now()
			st, err = c.Periodic(t.Context(), "timed")
			return err == nil && len(st) == 3 && st[2].Name == "tick" && !st[2].LastFire.IsZero()
		})
		gotGone, nightly, tick := st[0], st[1], st[2]
		if gotGone != (admin.PeriodicStatus{Name: "gone", LastFire: gone}) {
			t.Errorf("a schedule only remembered: %+v, want its last fire alone", gotGone)
		}
		if nightly.Name != "nightly" || nightly.Schedule != "0 3 * * *" || !nightly.LastFire.IsZero() {
			t.Errorf("nightly %+v", nightly)
		}
		if n := nightly.NextFire.UTC(); !n.After(asked) || n.Sub(asked) > 24*time.Hour || n.Hour() != 3 || n.Minute() != 0 || n.Second() != 0 {
			t.Errorf("nightly's next fire %v, want the next 03:00 UTC after %v", n, asked)
		}
		if tick.Schedule != "every 1s" {
			t.Errorf("tick's schedule %q, want every 1s", tick.Schedule)
		}
		if !tick.NextFire.After(asked) || tick.NextFire.Sub(asked) > time.Second || tick.NextFire.Nanosecond() != 0 {
			t.Errorf("tick's next fire %v, want the next whole second after %v", tick.NextFire, asked)
		}
		if tick.LastFire.After(asked) || asked.Sub(tick.LastFire) > 10*time.Second {
			t.Errorf("tick's last fire %v, want in the seconds before %v", tick.LastFire, asked)
		}
		if st, err := c.Periodic(t.Context(), "plain"); err != nil || len(st) != 0 {
			t.Errorf("Periodic of a queue without schedules = %+v, %v", st, err)
		}

		// Stopped, the daemon withdraws its report: the hash alone remains.
		if err := d.Stop(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		st, err := c.Periodic(t.Context(), "timed")
		if err != nil || len(st) != 2 || st[0].Name != "gone" || st[1].Name != "tick" {
			t.Fatalf("Periodic after the stop = %+v, %v; want gone and tick, remembered", st, err)
		}
		if tk := st[1]; tk.Schedule != "" || !tk.NextFire.IsZero() || tk.LastFire.IsZero() {
			t.Errorf("tick after the stop %+v, want its last fire alone", tk)
		}
		if _, err := c.Periodic(t.Context(), "bad{queue}"); err == nil {
			t.Error("Periodic of an invalid queue name succeeded")
		}
	})
}

// TestPeriodicStatusRollingChange: when two live processes report
// different schedules under one name, the most recently started one's is
// shown; a report this version cannot read is ignored.
func TestPeriodicStatusRollingChange(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
		fleet := queueKey(prefix, "q", "fleet")
		now := time.Now()
		report := func(id string, started time.Time, periodic ...map[string]any) {
			v, err := json.Marshal(map[string]any{"id": id, "concurrency": 1, "reported": now, "started": started, "periodic": periodic})
			if err != nil {
				t.Fatal(err)
			}
			testkit.Do(t, rdb, rdb.B().Set().Key(fleet+":"+id).Value(string(v)).Px(time.Minute).Build())
			testkit.Do(t, rdb, rdb.B().Sadd().Key(fleet).Member(id).Build())
		}
		// "a-new" sorts before "b-old": the order read is not the order chosen.
		report("a-new", now.Add(-time.Minute), map[string]any{"name": "s", "cron": "@hourly"}, map[string]any{"name": "bad", "cron": "not cron"})
		report("b-old", now.Add(-time.Hour), map[string]any{"name": "s", "every_ms": 30_000})
		report("c-older", now.Add(-2*time.Hour), map[string]any{"name": "s", "every_ms": 5_000})
		st, err := c.Periodic(t.Context(), "q")
		if err != nil || len(st) != 1 {
			t.Fatalf("Periodic = %+v, %v; want s alone", st, err)
		}
		if st[0].Name != "s" || st[0].Schedule != "@hourly" || st[0].NextFire.Sub(now) > time.Hour || !st[0].NextFire.After(now) {
			t.Errorf("s = %+v, want the newest process's @hourly, next within the hour", st[0])
		}
	})
}
