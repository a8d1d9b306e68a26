package store_test

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// carrierState is a queue's state plus the keys only the carrier writes.
type carrierState struct {
	queue    queueState
	periodic map[string]string
}

func carrierStateOf(t *testing.T, c rueidis.Client, k store.Keys) carrierState {
	t.Helper()
	return carrierState{queue: state(t, c, k), periodic: testkit.HGetAll(t, c, k.Periodic)}
}

// carrierUnchanged fails when the queue or its periodic hash differ from
// before.
func carrierUnchanged(t *testing.T, c rueidis.Client, k store.Keys, before carrierState) {
	t.Helper()
	unchanged(t, c, k, before.queue)
	if after := testkit.HGetAll(t, c, k.Periodic); !maps.Equal(after, before.periodic) {
		t.Errorf("periodic hash changed: before %v, after %v", before.periodic, after)
	}
}

func TestCarrierScriptsAreFenced(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		// Give every duty something to do, so that a call that got past the
		// fence would change something: an expired lease, old dead jobs and
		// a fire time in the past.
		seed(t, s)
		enqueue(t, s, job("expired", "e"))
		if r := claimOne(t, s, shortLease); r.ID != "expired" {
			t.Fatalf("claimed %s, want expired", r.ID)
		}
		waitLeasesExpired(t, c, k, "expired")
		now := testkit.RedisNow(t, c)
		writeDead(t, c, k, dead("old-1", now-time.Hour.Milliseconds()), dead("old-2", now-time.Hour.Milliseconds()+1))
		const mine = "test-client-uuid:leader"
		fire := store.Fire{Schedule: "tick", At: time.UnixMilli(now - 1000), Payload: []byte("p")}

		tests := []struct {
			name   string
			leader map[string]string // the leader hash; nil: no key
			field  string            // the caller's field
		}{
			{"no leader hash", nil, mine},
			{"another field holds the lock", map[string]string{"other-client-uuid:leader": "1"}, mine},
			{"same client, another holder", map[string]string{"test-client-uuid:other": "1"}, mine},
			{"empty field", map[string]string{"": "1"}, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				do(t, c, c.B().Del().Key(k.Leader).Build())
				for f, v := range tt.leader {
					do(t, c, c.B().Hset().Key(k.Leader).FieldValue().FieldValue(f, v).Build())
				}
				before := carrierStateOf(t, c, k)
				if r, err := s.Recover(t.Context(), queue, tt.field, 100, 3); !errors.Is(err, store.ErrNotLeader) {
					t.Errorf("Recover = %+v, %v; want ErrNotLeader", r, err)
				}
				if r, err := s.TrimDead(t.Context(), queue, tt.field, 0, time.Minute, 100); !errors.Is(err, store.ErrNotLeader) {
					t.Errorf("TrimDead = %+v, %v; want ErrNotLeader", r, err)
				}
				if r, err := s.Fire(t.Context(), queue, tt.field, fire); !errors.Is(err, store.ErrNotLeader) {
					t.Errorf("Fire = %+v, %v; want ErrNotLeader", r, err)
				}
				carrierUnchanged(t, c, k, before)
				if got := testkit.HGetAll(t, c, k.Leader); !maps.Equal(got, tt.leader) {
					t.Errorf("leader hash = %v, want %v", got, tt.leader)
				}
			})
		}

		// The same calls under the lock do change the queue: the fenced
		// calls above were refused by the fence, not for want of work.
		do(t, c, c.B().Del().Key(k.Leader).Build())
		field := leaderField(t, s, c, queue)
		if field != mine {
			t.Fatalf("leaderField = %q, want %q", field, mine)
		}
		if r, err := s.Recover(t.Context(), queue, field, 100, 3); err != nil || r != (store.Recovered{Due: 1}) {
			t.Errorf("Recover as the leader = %+v, %v; want 1 due", r, err)
		}
		if r, err := s.TrimDead(t.Context(), queue, field, 100, time.Minute, 100); err != nil || r != (store.Trimmed{ByAge: 2}) {
			t.Errorf("TrimDead as the leader = %+v, %v; want 2 by age", r, err)
		}
		if r, err := s.Fire(t.Context(), queue, field, fire); err != nil || !r.Fired {
			t.Errorf("Fire as the leader = %+v, %v; want fired", r, err)
		}
	})
}

func TestTrimDead(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		field := leaderField(t, s, c, queue)
		// Jobs in due and active, which trimming must not touch.
		enqueue(t, s, job("running", "r"))
		claimOne(t, s, time.Hour)
		enqueue(t, s, store.NewJob{ID: "later", Delay: time.Hour})

		now := testkit.RedisNow(t, c)
		ago := func(d time.Duration) int64 { return now - d.Milliseconds() }
		writeDead(t, c, k,
			dead("old-1", ago(10*time.Hour)), dead("old-2", ago(9*time.Hour)), dead("old-3", ago(8*time.Hour)),
			dead("mid-1", ago(3*time.Hour)), dead("mid-2", ago(2*time.Hour)),
			dead("new-1", ago(time.Minute)), dead("new-2", ago(time.Second)),
		)
		before := state(t, c, k)

		// Keep at most 2 jobs and nothing older than 5h, 2 deletions per call:
		// by age first (oldest first), then the oldest beyond the count.
		steps := []struct {
			want    store.Trimmed
			deleted []string
		}{
			{store.Trimmed{ByAge: 2}, []string{"old-1", "old-2"}}, // the limit stops it before the count
			{store.Trimmed{ByAge: 1, ByCount: 1}, []string{"old-3", "mid-1"}},
			{store.Trimmed{ByCount: 1}, []string{"mid-2"}},
			{store.Trimmed{}, nil},
		}
		gone := map[string]bool{}
		for i, step := range steps {
			got, err := s.TrimDead(t.Context(), queue, field, 2, 5*time.Hour, 2)
			if err != nil || got != step.want {
				t.Fatalf("step %d: TrimDead = %+v, %v; want %+v", i, got, err, step.want)
			}
			for _, id := range step.deleted {
				gone[id] = true
			}
			after := state(t, c, k)
			for id := range before.Dead {
				_, inDead := after.Dead[id]
				_, inJobs := after.Jobs[id]
				if inDead == gone[id] || inJobs == gone[id] {
					t.Errorf("step %d: %s in dead %v, in jobs %v; want deleted %v", i, id, inDead, inJobs, gone[id])
				}
			}
			if !maps.Equal(after.Due, before.Due) || !maps.Equal(after.Active, before.Active) || !maps.Equal(after.Claims, before.Claims) {
				t.Errorf("step %d: due/active changed:\nbefore %v\nafter  %v", i, before, after)
			}
			for _, id := range []string{"running", "later"} {
				if after.Jobs[id] != before.Jobs[id] {
					t.Errorf("step %d: record of %s changed", i, id)
				}
			}
		}
		if got := slices.Sorted(maps.Keys(state(t, c, k).Dead)); !slices.Equal(got, []string{"new-1", "new-2"}) {
			t.Errorf("dead after trimming = %v, want [new-1 new-2]", got)
		}

		// Count limit 0 empties the dead set, still limit by limit.
		if got, err := s.TrimDead(t.Context(), queue, field, 0, 5*time.Hour, 1); err != nil || got != (store.Trimmed{ByCount: 1}) {
			t.Errorf("TrimDead(max 0, limit 1) = %+v, %v; want 1 by count", got, err)
		}
		if got := slices.Collect(maps.Keys(state(t, c, k).Dead)); !slices.Equal(got, []string{"new-2"}) {
			t.Errorf("dead = %v, want [new-2] (the oldest goes first)", got)
		}
	})
}

func TestFire(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		field := leaderField(t, s, c, queue)
		wakes := subscribe(t, s, queue)
		if _, ok, err := s.LastFire(t.Context(), queue, "tick"); ok || err != nil {
			t.Fatalf("LastFire of a new schedule = %v, %v; want none", ok, err)
		}

		at := time.UnixMilli(testkit.RedisNow(t, c) - 1000)
		f := store.Fire{Schedule: "tick", At: at, Payload: []byte("p"), MaxAttempts: 3, Timeout: 5 * time.Second}
		before := testkit.RedisNow(t, c)
		res, err := s.Fire(t.Context(), queue, field, f)
		after := testkit.RedisNow(t, c)
		if err != nil || !res.Fired || res.Early {
			t.Fatalf("Fire = %+v, %v; want fired", res, err)
		}
		inRange(t, "Now", res.Now.UnixMilli(), before, after)
		id := store.FireID("tick", at)
		if want := "periodic:tick:" + strconv.FormatInt(at.UnixMilli(), 10); id != want {
			t.Errorf("FireID = %q, want %q", id, want)
		}
		snap := get(t, s, id)
		if snap.Set != store.SetDue || !snap.Score.Equal(at) || snap.Record.Attempt != 0 || snap.Record.MaxAttempts != 3 ||
			snap.Record.Timeout != 5*time.Second || string(snap.Record.Payload) != "p" {
			t.Errorf("fired job = %+v (payload %q), want due at %v", snap, snap.Record.Payload, at)
		}
		inRange(t, "enqueued at", snap.Record.EnqueuedAt.UnixMilli(), before, after)
		if got := nextWake(t, wakes); got != at.UnixMilli() {
			t.Errorf("wake-up at %d, want the fire time %d", got, at.UnixMilli())
		}
		if last, ok, err := s.LastFire(t.Context(), queue, "tick"); err != nil || !ok || !last.Equal(at) {
			t.Errorf("LastFire = %v, %v, %v; want %v", last, ok, err, at)
		}

		// The same fire again, or an earlier one: nothing happens.
		st := carrierStateOf(t, c, k)
		for _, when := range []time.Time{at, at.Add(-500 * time.Millisecond)} {
			g := f
			g.At = when
			if res, err := s.Fire(t.Context(), queue, field, g); err != nil || res.Fired || res.Early {
				t.Errorf("Fire(%v) after %v = %+v, %v; want not fired", when, at, res, err)
			}
		}
		carrierUnchanged(t, c, k, st)

		// A fire ahead of the Redis clock: Early, with the Redis clock, and
		// nothing written.
		g := f
		g.At = time.UnixMilli(testkit.RedisNow(t, c) + time.Hour.Milliseconds())
		before = testkit.RedisNow(t, c)
		res, err = s.Fire(t.Context(), queue, field, g)
		after = testkit.RedisNow(t, c)
		if err != nil || !res.Early || res.Fired {
			t.Errorf("Fire an hour ahead = %+v, %v; want early", res, err)
		}
		inRange(t, "Now of an early fire", res.Now.UnixMilli(), before, after)
		carrierUnchanged(t, c, k, st)

		// The next fire is enqueued; another schedule has its own last fire.
		later := at.Add(500 * time.Millisecond)
		g.At = later
		if res, err := s.Fire(t.Context(), queue, field, g); err != nil || !res.Fired {
			t.Errorf("Fire(%v) = %+v, %v; want fired", later, res, err)
		}
		if res, err := s.Fire(t.Context(), queue, field, store.Fire{Schedule: "tock", At: at}); err != nil || !res.Fired {
			t.Errorf("Fire of another schedule = %+v, %v; want fired", res, err)
		}
		if last, ok, err := s.LastFire(t.Context(), queue, "tick"); err != nil || !ok || !last.Equal(later) {
			t.Errorf("LastFire(tick) = %v, %v, %v; want %v", last, ok, err, later)
		}
		if last, ok, err := s.LastFire(t.Context(), queue, "tock"); err != nil || !ok || !last.Equal(at) {
			t.Errorf("LastFire(tock) = %v, %v, %v; want %v", last, ok, err, at)
		}
		due := state(t, c, k).Due
		for _, id := range []string{store.FireID("tick", at), store.FireID("tick", later), store.FireID("tock", at)} {
			if _, ok := due[id]; !ok {
				t.Errorf("%s is not due; due = %v", id, due)
			}
		}
		if len(due) != 3 {
			t.Errorf("due = %v, want 3 fires", due)
		}

		// Even when the last fire time is lost, a fire whose job exists is
		// not enqueued again (the job is left as it is).
		do(t, c, c.B().Del().Key(k.Periodic).Build())
		st = carrierStateOf(t, c, k)
		if res, err := s.Fire(t.Context(), queue, field, g); err != nil || res.Fired {
			t.Errorf("Fire of an existing job = %+v, %v; want not fired", res, err)
		}
		unchanged(t, c, k, st.queue)
	})
}

// TestCarrierScriptsRejectBadArguments extends the table of
// TestScriptsRejectBadArguments to trim.lua and fire.lua: each is called
// raw as the leader, with work to do, and must refuse before any write.
func TestCarrierScriptsRejectBadArguments(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s)
		field := leaderField(t, s, c, queue)
		now := testkit.RedisNow(t, c)
		writeDead(t, c, k, dead("old", now-time.Hour.Milliseconds()))
		past := strconv.FormatInt(now-1000, 10)
		trimKeys := []string{k.Jobs, k.Dead, k.Leader, k.State, k.Opts, k.Results}
		fireKeys := []string{k.Jobs, k.Due, k.Periodic, k.Leader}
		fireArgs := func(schedule, at, maxAttempts, timeout string) []string {
			return []string{field, k.Wake, schedule, at, maxAttempts, timeout, "p"}
		}

		tests := []struct {
			name   string
			script *script.Script
			keys   []string
			args   []string
		}{
			{"trim max jobs -1", script.Trim, trimKeys, []string{field, "-1", "1000", "10"}},
			{"trim max jobs not a number", script.Trim, trimKeys, []string{field, "all", "1000", "10"}},
			{"trim max age -1", script.Trim, trimKeys, []string{field, "0", "-1", "10"}},
			{"trim max age not a number", script.Trim, trimKeys, []string{field, "0", "1h", "10"}},
			{"trim limit 0", script.Trim, trimKeys, []string{field, "0", "1000", "0"}},
			{"trim limit 1001", script.Trim, trimKeys, []string{field, "0", "1000", "1001"}},

			{"fire empty schedule", script.Fire, fireKeys, fireArgs("", past, "0", "0")},
			{"fire time negative", script.Fire, fireKeys, fireArgs("tick", "-1", "0", "0")},
			{"fire time fractional", script.Fire, fireKeys, fireArgs("tick", past+".5", "0", "0")},
			{"fire time not a number", script.Fire, fireKeys, fireArgs("tick", "now", "0", "0")},
			{"fire max attempts negative", script.Fire, fireKeys, fireArgs("tick", past, "-1", "0")},
			{"fire max attempts fractional", script.Fire, fireKeys, fireArgs("tick", past, "1.5", "0")},
			{"fire max attempts not a number", script.Fire, fireKeys, fireArgs("tick", past, "three", "0")},
			{"fire timeout negative", script.Fire, fireKeys, fireArgs("tick", past, "0", "-5")},
			{"fire timeout not a number", script.Fire, fireKeys, fireArgs("tick", past, "0", "5s")},
			{"fire time in exponent form", script.Fire, fireKeys, fireArgs("tick", past+"e0", "0", "0")},
			{"fire time with a leading zero", script.Fire, fireKeys, fireArgs("tick", "0"+past, "0", "0")},
			{"fire max attempts in exponent form", script.Fire, fireKeys, fireArgs("tick", past, "1e1", "0")},
			{"fire timeout in hex", script.Fire, fireKeys, fireArgs("tick", past, "0", "0x10")},
			{"fire timeout too long for a record", script.Fire, fireKeys, fireArgs("tick", past, "0", "9999999999999")},
			{"fire headers without a newline", script.Fire, fireKeys, append(fireArgs("tick", past, "0", "0"), "a=b")},
			{"fire headers of one byte", script.Fire, fireKeys, append(fireArgs("tick", past, "0", "0"), "\n")},
		}
		before := carrierStateOf(t, c, k)
		for _, tt := range tests {
			err := tt.script.Exec(t.Context(), script.NewConn(c, nil), tt.keys, tt.args).Error()
			if err == nil {
				t.Errorf("%s: no error", tt.name)
				continue
			}
			if !strings.Contains(err.Error(), "courier:") {
				t.Errorf("%s: error %q is not the script's own", tt.name, err)
			}
			carrierUnchanged(t, c, k, before)
		}
	})
}

// TestForgetSchedules: the entries of schedules no longer configured are
// deleted once they last fired before the cut-off; configured schedules and
// recent entries are kept.
func TestForgetSchedules(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		now := testkit.RedisNow(t, c)
		old, recent := strconv.FormatInt(now-10*86400000, 10), strconv.FormatInt(now, 10)
		testkit.Do(t, c, c.B().Hset().Key(k.Periodic).FieldValue().
			FieldValue("kept", old).FieldValue("removed", old).FieldValue("removed-2", old).
			FieldValue("recent", recent).Build())
		gone, err := s.ForgetSchedules(t.Context(), queue, []string{"kept"}, time.UnixMilli(now-86400000))
		if err != nil || !slices.Equal(gone, []string{"removed", "removed-2"}) {
			t.Fatalf("ForgetSchedules = %v, %v; want [removed removed-2]", gone, err)
		}
		left := testkit.HGetAll(t, c, k.Periodic)
		if len(left) != 2 || left["kept"] != old || left["recent"] != recent {
			t.Errorf("entries left %v, want kept and recent", left)
		}
		if gone, err := s.ForgetSchedules(t.Context(), queue, []string{"kept"}, time.UnixMilli(now-86400000)); err != nil || gone != nil {
			t.Errorf("second call = %v, %v; want nothing", gone, err)
		}
	})
}

// TestFireHeaders: a fire with headers (a job kind travels there) writes
// the c4 record enqueue writes, which reads back with them; without, the c3
// record older versions wrote and read.
func TestFireHeaders(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		field := leaderField(t, s, c, queue)
		at := time.UnixMilli(testkit.RedisNow(t, c) - 1000)
		h := map[string]string{"courier.kind": "report:daily", "x-team": "ops"}
		if res, err := s.Fire(t.Context(), queue, field, store.Fire{Schedule: "kinded", At: at, Payload: []byte("p"), Headers: h}); err != nil || !res.Fired {
			t.Fatalf("Fire with headers = %+v, %v", res, err)
		}
		if res, err := s.Fire(t.Context(), queue, field, store.Fire{Schedule: "plain", At: at, Payload: []byte("q")}); err != nil || !res.Fired {
			t.Fatalf("Fire without headers = %+v, %v", res, err)
		}
		kinded := get(t, s, store.FireID("kinded", at))
		if !maps.Equal(kinded.Record.Headers, h) || string(kinded.Record.Payload) != "p" {
			t.Errorf("fired job with headers: headers %v payload %q", kinded.Record.Headers, kinded.Record.Payload)
		}
		raw := testkit.HGetAll(t, c, k.Jobs)
		if r := raw[store.FireID("kinded", at)]; !strings.HasPrefix(r, "c4;") {
			t.Errorf("record with headers %q, want a c4 record", r)
		}
		if r := raw[store.FireID("plain", at)]; !strings.HasPrefix(r, "c3;") || !strings.HasSuffix(r, ";q") {
			t.Errorf("record without headers %q, want the c3 record", r)
		}
	})
}
