package store_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// previousScripts holds, as sent to Redis, scripts of the last version
// before the cancelled set (61536b1): what a process not yet upgraded runs
// during a rolling upgrade. docs/upgrading.md says what it does beside a
// cancelled job; this file holds it to that.
const previousScripts = "testdata/scripts-61536b1/"

// oldScript runs the previous version's script name with keys and args.
func oldScript(t *testing.T, c rueidis.Client, name string, keys []string, args ...string) rueidis.RedisResult {
	t.Helper()
	src, err := os.ReadFile(previousScripts + name + ".lua")
	if err != nil {
		t.Fatal(err)
	}
	return c.Do(t.Context(), c.B().Arbitrary("EVAL", string(src), strconv.Itoa(len(keys))).Keys(keys...).Args(args...).Build())
}

// TestPreviousVersionBesideCancelled: a process of the previous version,
// beside jobs the current one cancelled, reads a cancelled job as a record
// in no set, does not count it, cannot cancel, requeue or trim it, and
// does not forget its queue; and a job the previous version cancelled
// while it ran (dead, last error "cancelled") is read, extended and
// requeued by the current one as the dead job it is.
func TestPreviousVersionBesideCancelled(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		k := s.Keys(queue)
		enqueue(t, s, store.NewJob{ID: "waiting", Delay: time.Hour}, store.NewJob{ID: "running"})
		held := map[string]store.Token{}
		for _, r := range claim(t, s, 1, time.Hour).Jobs {
			held[r.ID] = r.Token()
		}
		for _, id := range []string{"waiting", "running"} {
			if res, err := s.Cancel(ctx, queue, id); err != nil || (res != store.Cancelled && res != store.CancelRunning) {
				t.Fatalf("Cancel(%s) = %v, %v", id, res, err)
			}
		}
		before := state(t, c, k)

		// The previous version's reads: a record in no set, not counted.
		got, err := oldScript(t, c, "get", []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.DueHigh, k.DueLow, k.Opts, k.Completed, k.Results}, "waiting").ToArray()
		if err != nil || len(got) != 9 {
			t.Fatalf("old get = %v, %v", got, err)
		}
		if set, _ := got[2].ToString(); set != "none" {
			t.Errorf("old get of a cancelled job: set %q, want none", set)
		}
		n, err := oldScript(t, c, "stats", []string{k.Due, k.Active, k.Dead, k.Paused, k.DueHigh, k.DueLow, k.Completed}).AsIntSlice()
		if err != nil || len(n) != 9 || n[0]+n[1]+n[2]+n[3] != 0 {
			t.Errorf("old stats = %v, %v; want nothing ready, scheduled, active or dead", n, err)
		}
		// Its writes leave a cancelled job alone.
		cancelKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.State, k.Claims, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Completed}
		if r, err := oldScript(t, c, "cancel", cancelKeys, "waiting", k.Wake).AsInt64(); err != nil || r != 0 {
			t.Errorf("old cancel of a cancelled job = %d, %v; want 0 (not found)", r, err)
		}
		requeueKeys := []string{k.Jobs, k.Due, k.Dead, k.State, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp}
		if r, err := oldScript(t, c, "requeue", requeueKeys, k.Wake, "waiting", "running").AsIntSlice(); err != nil || r[0]+r[1] != 0 {
			t.Errorf("old requeue of cancelled jobs = %v, %v; want none moved", r, err)
		}
		lost, err := oldScript(t, c, "extend", []string{k.Active, k.Claims, k.Dead, k.State}, "60000", "0", "running", strconv.FormatInt(held["running"].Claim, 10)).ToArray()
		if err != nil || len(lost) != 3 {
			t.Errorf("old extend of a cancelled run = %v, %v; want it lost", lost, err)
		}
		forgetKeys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Leader, k.Periodic, k.Fleet, k.Paused,
			k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Settings, k.History, k.HistoryIndex, k.Completed, k.Results}
		if r, err := oldScript(t, c, "forget", forgetKeys).AsInt64(); err != nil || r != 0 {
			t.Errorf("old forget of a queue holding cancelled jobs = %d, %v; want 0 (in use)", r, err)
		}
		field := leaderField(t, s, c, queue)
		if r, err := oldScript(t, c, "trim", []string{k.Jobs, k.Dead, k.Leader, k.State, k.Opts, k.Results}, field, "0", "0", "100").AsIntSlice(); err != nil || r[0]+r[1] != 0 {
			t.Errorf("old trim = %v, %v; want nothing deleted", r, err)
		}
		unchanged(t, c, k, before)

		// The previous version cancels a running job: dead, "cancelled".
		enqueue(t, s, store.NewJob{ID: "old-cancel"})
		r := claim(t, s, 1, time.Hour).Jobs
		if len(r) != 1 || r[0].ID != "old-cancel" {
			t.Fatalf("claimed %v, want old-cancel", r)
		}
		if res, err := oldScript(t, c, "cancel", cancelKeys, "old-cancel", k.Wake).AsInt64(); err != nil || res != 2 {
			t.Fatalf("old cancel of a running job = %d, %v; want 2", res, err)
		}
		snap := get(t, s, "old-cancel")
		if snap.Set != store.SetDead || snap.Record.LastError != store.CancelledError {
			t.Errorf("Get of the job the old version cancelled: %s, %q; want dead, %q", snap.Set, snap.Record.LastError, store.CancelledError)
		}
		gone, err := s.Extend(ctx, map[string][]store.Renewal{queue: {{Token: r[0].Token()}}}, time.Hour)
		if want := (store.Lost{Token: r[0].Token(), Cancelled: true}); err != nil || len(gone[queue]) != 1 || gone[queue][0] != want {
			t.Errorf("Extend of its run = %v, %v; want %+v", gone, err, want)
		}
		if moved, err := s.Requeue(ctx, queue, store.SetDead, []string{"old-cancel"}); err != nil || !moved[0] {
			t.Errorf("Requeue from dead = %v, %v", moved, err)
		}
	})
}
