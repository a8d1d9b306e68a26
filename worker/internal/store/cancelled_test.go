package store_test

import (
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestCancelledSet: cancelled jobs are read by Get (set cancelled, the
// cancel time), counted by Stats, listed oldest first by Dead with the
// cancelled set, found by DeadAmong, keep their queue in use, and go with
// a purge or the leader's trim (by count, then by age), their record,
// state and options entries with them.
func TestCancelledSet(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		ids := []string{"c1", "c2", "c3", "c4"}
		for _, id := range ids {
			enqueue(t, s, store.NewJob{ID: id, Delay: time.Hour, Priority: store.PriorityHigh, Payload: []byte(id)})
		}
		enqueue(t, s, store.NewJob{ID: "other", Delay: time.Hour})
		t0 := testkit.RedisNow(t, c)
		for _, id := range ids {
			if res, err := s.Cancel(ctx, queue, id); res != store.Cancelled || err != nil {
				t.Fatalf("Cancel(%s) = %v, %v", id, res, err)
			}
		}
		t1 := testkit.RedisNow(t, c)
		snap := get(t, s, "c1")
		if snap.Set != store.SetCancelled || string(snap.Record.Payload) != "c1" || snap.Record.Priority != store.PriorityHigh {
			t.Errorf("Get(c1) = %s %+v; want cancelled with its payload and priority", snap.Set, snap.Record)
		}
		inRange(t, "cancel time", snap.Score.UnixMilli(), t0, t1)
		if st, err := s.Stats(ctx, queue); err != nil || st.Cancelled != 4 || st.Scheduled != 1 || st.Dead != 0 {
			t.Errorf("Stats = %+v, %v; want 4 cancelled, 1 scheduled", st, err)
		}
		page, err := s.Dead(ctx, queue, store.DeadQuery{Set: store.SetCancelled, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, j := range page.Jobs {
			listed = append(listed, j.Record.ID)
		}
		if !slices.Equal(listed, ids) {
			t.Errorf("cancelled listed %v, want %v (oldest cancel first)", listed, ids)
		}
		if dead, err := s.Dead(ctx, queue, store.DeadQuery{Limit: 10}); err != nil || len(dead.Jobs) != 0 {
			t.Errorf("dead listed %v, %v; want none", dead.Jobs, err)
		}
		if in, err := s.DeadAmong(ctx, queue, store.SetCancelled, []string{"c1", "other"}); err != nil || !slices.Equal(in, []bool{true, false}) {
			t.Errorf("DeadAmong(cancelled) = %v, %v", in, err)
		}
		if _, err := s.DeadAmong(ctx, queue, store.SetActive, []string{"c1"}); err == nil {
			t.Errorf("DeadAmong of the active set: no error")
		}
		if u, err := s.QueueUse(ctx, queue); err != nil || u.Stats.Cancelled != 4 || !u.InUse() {
			t.Errorf("QueueUse = %+v, %v; want in use by 4 cancelled jobs", u, err)
		}

		field := leaderField(t, s, c, queue)
		if tr, err := s.TrimCancelled(ctx, queue, field, 2, 0, 100); err != nil || tr != (store.Trimmed{ByCount: 2}) {
			t.Errorf("TrimCancelled to 2 = %+v, %v; want 2 by count", tr, err)
		}
		if tr, err := s.TrimCancelled(ctx, "other-queue", "not-the-leader", 0, 0, 100); err == nil {
			t.Errorf("TrimCancelled without the lock = %+v; want an error", tr)
		}
		testkit.Eventually(t, 5*time.Second, "the Redis clock 2 ms past the cancels", func() bool { return testkit.RedisNow(t, c) > t1+2 })
		if tr, err := s.TrimCancelled(ctx, queue, field, 100, time.Millisecond, 1); err != nil || tr != (store.Trimmed{ByAge: 1}) {
			t.Errorf("TrimCancelled by age, limit 1 = %+v, %v; want 1 by age", tr, err)
		}
		if gone, err := s.Purge(ctx, queue, store.SetCancelled, []string{"c4", "other"}, time.Time{}); err != nil || !slices.Equal(gone, []bool{true, false}) {
			t.Errorf("Purge(cancelled) = %v, %v", gone, err)
		}
		st := state(t, c, k)
		if len(st.Cancelled) != 0 || len(st.Jobs) != 1 || len(st.State) != 0 || testkit.Exists(t, c, k.Opts) {
			t.Errorf("after trims and purge: %v; want only the scheduled job left", st)
		}
	})
}
