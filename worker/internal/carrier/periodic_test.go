package carrier

import (
	"bytes"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestFirstFire(t *testing.T) {
	t.Parallel()
	// t0 is a fire time of the every-second schedule.
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	sec := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	tests := []struct {
		name  string
		last  time.Time
		found bool
		skip  bool
		now   time.Time
		want  time.Time
		warns bool
	}{
		{name: "new schedule", now: ms(300), want: sec(1)},
		{name: "new schedule, now on a fire time", now: t0, want: sec(1)},
		{name: "new schedule, skip missed", skip: true, now: ms(300), want: sec(1)},
		{name: "last fire just before now", last: t0, found: true, now: ms(500), want: sec(1)},
		{name: "last fire now", last: t0, found: true, now: t0, want: sec(1)},
		{name: "missed fires are caught up from the oldest", last: sec(-5), found: true, now: ms(500), want: sec(-4)},
		{name: "last fire ahead of this clock", last: sec(3), found: true, now: t0, want: sec(4)},
		{name: "skip missed", last: sec(-5), found: true, skip: true, now: ms(500), want: sec(1)},
		{name: "skip missed, last fire ahead of this clock", last: sec(3), found: true, skip: true, now: t0, want: sec(4)},
		{name: "maxCatchUp missed are caught up", last: t0, found: true, now: sec(maxCatchUp), want: sec(1)},
		{name: "maxCatchUp+1 missed are skipped", last: t0, found: true, now: sec(maxCatchUp + 1), want: sec(maxCatchUp + 2), warns: true},
		{name: "a day missed is skipped", last: sec(-86400), found: true, now: ms(500), want: sec(1), warns: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var logs bytes.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			p := Periodic{Name: "tick", Schedule: period(time.Second), SkipMissed: tt.skip}
			if got := firstFire(p, tt.last, tt.found, tt.now, log); !got.Equal(tt.want) {
				t.Errorf("firstFire = %v, want %v", got, tt.want)
			}
			if warned := strings.Contains(logs.String(), "level=WARN"); warned != tt.warns {
				t.Errorf("warned %v, want %v; log: %s", warned, tt.warns, logs.String())
			}
		})
	}
}

func TestPeriodicAcrossLeaders(t *testing.T) {
	t.Parallel()
	const interval = 200 * time.Millisecond
	prefix := testkit.Prefix(t)
	queues := []Queue{{Name: testQueue, MaxAttempts: 3, Periodic: []Periodic{
		{Name: "tick", Schedule: period(interval), Payload: []byte("x"), MaxAttempts: 2},
	}}}
	run := func(name string, d time.Duration) *node {
		n := startNode(t, prefix, name, queues, Config{})
		waitLeader(t, n)
		select {
		case <-time.After(d):
		case <-t.Context().Done():
		}
		n.stop(t)
		return n
	}
	start := time.Now()
	a := run("a", 2*time.Second)
	stopped := time.Now()
	// No one leads for a while: the next leader catches up on these fires.
	select {
	case <-time.After(3 * interval):
	case <-t.Context().Done():
	}
	b := run("b", time.Second)
	if a.field() == b.field() {
		t.Fatalf("a and b share the field %s", a.field())
	}

	k := b.st.Keys(testQueue)
	ids, err := b.rdb.Do(t.Context(), b.rdb.B().Hkeys().Key(k.Jobs).Build()).AsStrSlice()
	if err != nil {
		t.Fatalf("HKEYS: %v", err)
	}
	var fires []int64
	for _, id := range ids {
		s, ok := strings.CutPrefix(id, "periodic:tick:")
		if !ok {
			t.Errorf("unexpected job %s", id)
			continue
		}
		at, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("job id %s: %v", id, err)
		}
		fires = append(fires, at)
	}
	slices.Sort(fires)
	t.Logf("%d fires from %s to %s", len(fires), time.UnixMilli(fires[0]).Format(time.StampMilli), time.UnixMilli(fires[len(fires)-1]).Format(time.StampMilli))
	if len(fires) < 10 {
		t.Fatalf("%d fires in about 3.6s at one per %v", len(fires), interval)
	}
	for i := 1; i < len(fires); i++ {
		if d := time.Duration(fires[i]-fires[i-1]) * time.Millisecond; d != interval {
			t.Errorf("fire %d at %d comes %v after the one before, want %v", i, fires[i], d, interval)
		}
	}
	first, last := time.UnixMilli(fires[0]), time.UnixMilli(fires[len(fires)-1])
	if first.Before(start.Add(-interval)) || !last.After(stopped.Add(3*interval)) {
		t.Errorf("fires from %v to %v; a led from %v to %v, b after %v", first, last, start, stopped, stopped.Add(3*interval))
	}
	if at, ok, err := b.st.LastFire(t.Context(), testQueue, "tick"); err != nil || !ok || !at.Equal(last) {
		t.Errorf("LastFire = %v, %v, %v; want %v", at, ok, err, last)
	}
	for _, at := range fires {
		id := store.FireID("tick", time.UnixMilli(at))
		snap, err := b.st.Get(t.Context(), testQueue, id)
		if err != nil || snap.Set != store.SetDue || snap.Score.UnixMilli() != at || snap.Record.MaxAttempts != 2 || string(snap.Record.Payload) != "x" {
			t.Errorf("%s: %+v, %v; want due at its fire time", id, snap, err)
		}
	}
}

// TestLeaderForgetsRemovedSchedules: a new leader deletes the last-fire
// entries of schedules its configuration no longer has, once they are older
// than scheduleRetention; a configured schedule keeps its entry, however old.
func TestLeaderForgetsRemovedSchedules(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	rdb := testkit.Single(t)
	key := store.QueueKeys(prefix, testQueue).Periodic
	now := testkit.RedisNow(t, rdb)
	old := strconv.FormatInt(now-(scheduleRetention+time.Hour).Milliseconds(), 10)
	recent := strconv.FormatInt(now-time.Hour.Milliseconds(), 10)
	testkit.Do(t, rdb, rdb.B().Hset().Key(key).FieldValue().
		FieldValue("kept", old).FieldValue("removed", old).FieldValue("removed-lately", recent).Build())

	q := Queue{Name: testQueue, MaxAttempts: 3, Periodic: []Periodic{{Name: "kept", Schedule: period(time.Hour), SkipMissed: true}}}
	n := startNodeOn(t, rdb, prefix, "a", []Queue{q}, Config{RecoverInterval: time.Second})
	waitLeader(t, n)
	testkit.Eventually(t, 10*time.Second, "the removed schedule's entry to go", func() bool {
		_, ok := testkit.HGet(t, rdb, key, "removed")
		return !ok
	})
	left := testkit.HGetAll(t, rdb, key)
	if _, ok := left["kept"]; !ok {
		t.Errorf("the configured schedule's entry is gone: %v", left)
	}
	if left["removed-lately"] != recent {
		t.Errorf("an entry younger than the retention is gone: %v", left)
	}
}
