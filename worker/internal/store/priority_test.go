package store_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// zsetOf returns the sorted set at key as member → score (empty when absent).
func zsetOf(t *testing.T, c rueidis.Client, key string) map[string]float64 {
	t.Helper()
	zs, err := c.Do(t.Context(), c.B().Zrange().Key(key).Min("0").Max("-1").Withscores().Build()).AsZScores()
	if err != nil {
		t.Fatalf("ZRANGE %s: %v", key, err)
	}
	m := make(map[string]float64, len(zs))
	for _, z := range zs {
		m[z.Member] = z.Score
	}
	return m
}

// levelState is queueState (main_test.go) plus the keys of priorities and
// unique jobs, for "nothing changed" assertions on queues that use them.
type levelState struct {
	queue        queueState
	high, low    map[string]float64 // due:high, due:low
	opts, unique map[string]string
	uniqueExp    map[string]float64
	settings     map[string]string
}

func levelStateOf(t *testing.T, c rueidis.Client, k store.Keys) levelState {
	t.Helper()
	return levelState{
		queue: state(t, c, k),
		high:  zsetOf(t, c, k.DueHigh), low: zsetOf(t, c, k.DueLow),
		opts: testkit.HGetAll(t, c, k.Opts), unique: testkit.HGetAll(t, c, k.Unique),
		uniqueExp: zsetOf(t, c, k.UniqueExp), settings: testkit.HGetAll(t, c, k.Settings),
	}
}

func (a levelState) equal(b levelState) bool {
	return a.queue.equal(b.queue) && maps.Equal(a.high, b.high) && maps.Equal(a.low, b.low) && maps.Equal(a.opts, b.opts) &&
		maps.Equal(a.unique, b.unique) && maps.Equal(a.uniqueExp, b.uniqueExp) && maps.Equal(a.settings, b.settings)
}

func (a levelState) String() string {
	return fmt.Sprintf("%v due:high=%v due:low=%v opts=%v unique=%v unique:exp=%v settings=%v", a.queue, a.high, a.low, a.opts, a.unique, a.uniqueExp, a.settings)
}

// levelsUnchanged fails when the queue, its due levels, options, unique
// keys or settings differ from before.
func levelsUnchanged(t *testing.T, c rueidis.Client, k store.Keys, before levelState) {
	t.Helper()
	if after := levelStateOf(t, c, k); !after.equal(before) {
		t.Errorf("queue changed:\nbefore %v\nafter  %v", before, after)
	}
}

// priorityOf returns the level a test job's id names by its first letter:
// h, n or l.
func priorityOf(id string) store.Priority {
	switch id[0] {
	case 'h':
		return store.PriorityHigh
	case 'l':
		return store.PriorityLow
	}
	return store.PriorityNormal
}

// backlog enqueues n jobs due now to q at each of the given levels, with
// ids "<h|n|l>-<i>" (see priorityOf).
func backlog(t *testing.T, s *store.Store, q string, n int, levels ...store.Priority) {
	t.Helper()
	var jobs []store.NewJob
	for _, p := range levels {
		letter := map[store.Priority]string{store.PriorityHigh: "h", store.PriorityNormal: "n", store.PriorityLow: "l"}[p]
		for i := range n {
			jobs = append(jobs, store.NewJob{ID: fmt.Sprintf("%s-%04d", letter, i), Priority: p})
		}
	}
	enqueueTo(t, s, q, jobs...)
}

// claimWith claims up to n jobs of q with o, and checks that every job
// claimed says the level its id names.
func claimWith(t *testing.T, s *store.Store, q string, n int, o store.ClaimOptions) store.Claimed {
	t.Helper()
	got, err := s.ClaimWith(t.Context(), q, n, time.Hour, o)
	if err != nil {
		t.Fatalf("ClaimWith(%d, %+v): %v", n, o, err)
	}
	if len(got.Bad) > 0 {
		t.Fatalf("ClaimWith: bad records %v", got.Bad)
	}
	for _, r := range got.Jobs {
		if r.Priority != priorityOf(r.ID) {
			t.Errorf("claimed %s with Priority %d, want %d", r.ID, r.Priority, priorityOf(r.ID))
		}
	}
	return got
}

// shares claims calls times up to per jobs of q with o, fails unless every
// claim took per jobs, and counts the jobs claimed by level.
func shares(t *testing.T, s *store.Store, q string, calls, per int, o store.ClaimOptions) map[store.Priority]int {
	t.Helper()
	got := map[store.Priority]int{}
	for i := range calls {
		c := claimWith(t, s, q, per, o)
		if len(c.Jobs) != per {
			t.Fatalf("claim %d took %d jobs, want %d", i, len(c.Jobs), per)
		}
		for _, r := range c.Jobs {
			got[r.Priority]++
		}
	}
	return got
}

func TestPriorityStrictOrder(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		base := testkit.RedisNow(t, c) - 10_000
		runAt := map[string]int64{"l-100": 100, "n-300": 300, "h-200": 200, "l-50": 50, "n-10": 10, "h-400": 400}
		var jobs []store.NewJob
		for _, id := range slices.Sorted(maps.Keys(runAt)) {
			runAt[id] += base
			jobs = append(jobs, store.NewJob{ID: id, At: time.UnixMilli(runAt[id]), Priority: priorityOf(id)})
		}
		jobs = append(jobs, store.NewJob{ID: "h-later", Delay: time.Hour, Priority: store.PriorityHigh})
		enqueue(t, s, jobs...)
		later := mustScore(t, c, k.DueHigh, "h-later")

		// Every high job due before any normal one, before any low one,
		// each level by run-at; a claim that spans levels lists them so.
		// The high job an hour ahead is never claimed early: due jobs of
		// lower levels go first.
		steps := []struct {
			n    int
			want []string
			next int64 // Claimed.Next: the earliest head of every level
		}{
			{1, []string{"h-200"}, runAt["n-10"]},
			{2, []string{"h-400", "n-10"}, runAt["l-50"]},
			{2, []string{"n-300", "l-50"}, runAt["l-100"]},
			{10, []string{"l-100"}, later},
			{10, nil, later},
		}
		for i, step := range steps {
			got := claim(t, s, step.n, time.Hour)
			if !slices.Equal(ids(got.Jobs), step.want) {
				t.Fatalf("claim %d (%d) = %v, want %v", i, step.n, ids(got.Jobs), step.want)
			}
			for _, r := range got.Jobs {
				if r.Priority != priorityOf(r.ID) || r.RunAt.UnixMilli() != runAt[r.ID] {
					t.Errorf("claim %d: %s has Priority %d and RunAt %d, want %d and %d", i, r.ID, r.Priority, r.RunAt.UnixMilli(), priorityOf(r.ID), runAt[r.ID])
				}
			}
			if got.Next.UnixMilli() != step.next {
				t.Errorf("claim %d: Next = %d, want %d", i, got.Next.UnixMilli(), step.next)
			}
		}

		// A normal job due now goes before the high one not yet due.
		enqueue(t, s, job("n-now", ""))
		if r := claimOne(t, s, time.Hour); r.ID != "n-now" || r.Priority != store.PriorityNormal {
			t.Errorf("claimed %s (Priority %d), want n-now", r.ID, r.Priority)
		}
		if snap := get(t, s, "h-later"); snap.Set != store.SetDue || snap.Record.Priority != store.PriorityHigh {
			t.Errorf("h-later = %s with Priority %d, want due and high", snap.Set, snap.Record.Priority)
		}
	})
}

func TestPriorityWeights(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		high, normal, low := store.PriorityHigh, store.PriorityNormal, store.PriorityLow
		w311 := store.ClaimOptions{Weights: store.Weights{High: 3, Normal: 1, Low: 1}}

		// With a backlog at every level, each gets about its share: 60%,
		// 20%, 20%. Strict priority would give high everything. The bounds
		// are more than 6 standard deviations wide for claims of one job
		// (each a draw by the clock's µs), wider still for claims of ten.
		for _, per := range []int{1, 10} {
			t.Run(fmt.Sprintf("claims of %d", per), func(t *testing.T) {
				t.Parallel()
				q := fmt.Sprintf("weights-%d", per)
				backlog(t, s, q, 600, high, normal, low)
				const total = 500
				got := shares(t, s, q, total/per, per, w311)
				inRange(t, "high jobs", int64(got[high]), total*45/100, total*75/100)
				inRange(t, "normal jobs", int64(got[normal]), total*8/100, total*35/100)
				inRange(t, "low jobs", int64(got[low]), total*8/100, total*35/100)
				t.Logf("claims of %d: %v of %d", per, got, total)
			})
		}

		t.Run("a level without due jobs leaves its share to the others", func(t *testing.T) {
			t.Parallel()
			const q = "weights-no-normal"
			backlog(t, s, q, 300, high, low)
			enqueueTo(t, s, q, store.NewJob{ID: "n-later", Delay: time.Hour})
			got := shares(t, s, q, 20, 10, w311) // 75% and 25% of 200
			if got[normal] != 0 {
				t.Errorf("claimed %d normal jobs, none is due", got[normal])
			}
			inRange(t, "high jobs", int64(got[high]), 120, 180)
			inRange(t, "low jobs", int64(got[low]), 20, 80)
		})

		t.Run("a level with few due jobs leaves the rest to the others", func(t *testing.T) {
			t.Parallel()
			const q = "weights-short"
			backlog(t, s, q, 2, high)
			backlog(t, s, q, 100, normal, low)
			got := shares(t, s, q, 1, 10, w311)
			// What the high level cannot fill of its share (about 6 of 10)
			// goes to the next level down first: normal gets its own share
			// and that, low only its own.
			if got[high] != 2 || got[normal] <= got[low] {
				t.Errorf("claimed %v, want the 2 high jobs and more normal than low ones", got)
			}
		})

		t.Run("a level of weight 0 gets what the others leave", func(t *testing.T) {
			t.Parallel()
			w011 := store.ClaimOptions{Weights: store.Weights{High: 0, Normal: 1, Low: 1}}
			backlog(t, s, "weights-zero", 30, high, normal, low)
			if got := shares(t, s, "weights-zero", 3, 10, w011); got[high] != 0 {
				t.Errorf("claimed %v, want no high job while normal and low ones are due", got)
			}
			// Normal is then the one level of weight above 0 with jobs due,
			// and gets the whole claim while it has jobs.
			backlog(t, s, "weights-zero-one", 10, high, normal)
			for _, o := range []store.ClaimOptions{w011, {Weights: store.Weights{Normal: 1}}} {
				if got := claimWith(t, s, "weights-zero-one", 5, o); len(got.Jobs) != 5 || slices.ContainsFunc(got.Jobs, func(r store.Record) bool { return r.Priority != normal }) {
					t.Errorf("weights %+v, high and normal jobs due: claimed %v, want 5 normal jobs", o.Weights, ids(got.Jobs))
				}
			}
			// What the levels of weight above 0 cannot fill goes to the
			// others.
			enqueueTo(t, s, "weights-zero-rest", store.NewJob{ID: "h-0", Priority: high}, store.NewJob{ID: "n-0"}, store.NewJob{ID: "n-1"})
			if got := claimWith(t, s, "weights-zero-rest", 10, w011); len(got.Jobs) != 3 {
				t.Errorf("claimed %v, want the normal jobs and then the high one", ids(got.Jobs))
			}
		})
	})
}

func TestPriorityBadWeights(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s)
		// Jobs due at every level, so that a claim that went ahead would
		// change something.
		backlog(t, s, queue, 2, store.PriorityHigh, store.PriorityNormal, store.PriorityLow)
		keys := []string{k.Jobs, k.Due, k.Active, k.Dead, k.Claims, k.State, k.Rate, k.Paused, k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.History, k.HistoryIndex}
		before := levelStateOf(t, c, k)
		for _, w := range []string{"1001,0,0", "0,0,1001", "0,0,0", "a,b,c", "1,2", "1,2,3,4", "-1,1,1", "1.5,1,1", "00001,1,1", " 1,1,1"} {
			err := script.Claim.Exec(t.Context(), script.NewConn(c, nil), keys, []string{"10", "1000", "0", "0", w}).Error()
			if err == nil || !strings.Contains(err.Error(), "courier: weights") {
				t.Errorf("claim with weights %q: error %v, want the script's refusal of the weights", w, err)
			}
			levelsUnchanged(t, c, k, before)
		}
		for _, w := range []store.Weights{{High: store.MaxWeight + 1}, {High: -1, Normal: 1}} {
			if got, err := s.ClaimWith(t.Context(), queue, 10, time.Hour, store.ClaimOptions{Weights: w}); err == nil {
				t.Errorf("ClaimWith(%+v) = %v, want an error", w, ids(got.Jobs))
			}
		}
		levelsUnchanged(t, c, k, before)
		// The largest weights are taken.
		if got := claimWith(t, s, queue, 10, store.ClaimOptions{Weights: store.Weights{High: store.MaxWeight, Normal: store.MaxWeight, Low: store.MaxWeight}}); len(got.Jobs) != 6 {
			t.Errorf("claim with weights of %d took %v, want the 6 jobs due", store.MaxWeight, ids(got.Jobs))
		}
	})
}

// TestPriorityKeptBackInDue: a job that goes back to due (retried, snoozed,
// recovered, requeued after dying or being cancelled) goes back to the due
// zset of its own level, keeps its Priority, and is claimed by level again.
func TestPriorityKeptBackInDue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k, ctx := s.Keys(queue), t.Context()
		field := leaderField(t, s, c, queue)
		enqueue(t, s,
			store.NewJob{ID: "l", Priority: store.PriorityLow},
			store.NewJob{ID: "n"},
			store.NewJob{ID: "h", Priority: store.PriorityHigh},
			store.NewJob{ID: "h-later", Delay: time.Hour, Priority: store.PriorityHigh},
			store.NewJob{ID: "l-later", Delay: time.Hour, Priority: store.PriorityLow},
		)
		dueOf := map[store.Priority]string{store.PriorityHigh: k.DueHigh, store.PriorityNormal: k.Due, store.PriorityLow: k.DueLow}
		inLevels := func(what string, set store.Set, ids ...string) {
			t.Helper()
			for _, id := range ids {
				p := priorityOf(id)
				if snap := get(t, s, id); snap.Set != set || snap.Record.Priority != p {
					t.Errorf("%s: %s is %s with Priority %d, want %s and %d", what, id, snap.Set, snap.Record.Priority, set, p)
				}
				for level, key := range dueOf {
					if _, ok := testkit.ZScore(t, c, key, id); ok != (set == store.SetDue && level == p) {
						t.Errorf("%s: %s in %s: %v", what, id, key, ok)
					}
				}
			}
		}
		stats := func(what string, want store.Stats) {
			t.Helper()
			if st, err := s.Stats(ctx, queue); err != nil || st != want {
				t.Errorf("%s: Stats = %+v, %v; want %+v", what, st, err, want)
			}
		}
		ready := store.Stats{Ready: 3, Scheduled: 2, ReadyHigh: 1, ReadyLow: 1}
		inLevels("enqueued", store.SetDue, "h", "n", "l", "h-later", "l-later")
		stats("enqueued", ready)

		ops := []struct {
			name  string
			lease time.Duration
			back  func(t *testing.T, recs []store.Record)
		}{
			{"retry", time.Hour, func(t *testing.T, recs []store.Record) {
				for _, r := range recs {
					if ok, err := s.Retry(ctx, queue, r.Token(), 0, "again"); !ok || err != nil {
						t.Fatalf("Retry(%s) = %v, %v", r.ID, ok, err)
					}
				}
			}},
			{"snooze", time.Hour, func(t *testing.T, recs []store.Record) {
				if n, err := s.Snooze(ctx, queue, tokens(recs), 0); n != 3 || err != nil {
					t.Fatalf("Snooze = %d, %v", n, err)
				}
			}},
			{"recover", shortLease, func(t *testing.T, recs []store.Record) {
				waitLeasesExpired(t, c, k, ids(recs)...)
				if got, err := s.Recover(ctx, queue, field, 100, 100); got != (store.Recovered{Due: 3}) || err != nil {
					t.Fatalf("Recover = %+v, %v", got, err)
				}
			}},
			{"kill, requeue", time.Hour, func(t *testing.T, recs []store.Record) {
				for _, r := range recs {
					if ok, err := s.Kill(ctx, queue, r.Token(), "dead"); !ok || err != nil {
						t.Fatalf("Kill(%s) = %v, %v", r.ID, ok, err)
					}
				}
				inLevels("killed", store.SetDead, ids(recs)...)
				stats("killed", store.Stats{Scheduled: 2, Dead: 3})
				if moved, err := s.Requeue(ctx, queue, store.SetDead, ids(recs)); err != nil || slices.Contains(moved, false) {
					t.Fatalf("Requeue = %v, %v", moved, err)
				}
			}},
			{"cancel running, requeue", time.Hour, func(t *testing.T, recs []store.Record) {
				for _, r := range recs {
					if res, err := s.Cancel(ctx, queue, r.ID); res != store.CancelRunning || err != nil {
						t.Fatalf("Cancel(%s) = %v, %v", r.ID, res, err)
					}
				}
				inLevels("cancelled", store.SetCancelled, ids(recs)...)
				stats("cancelled", store.Stats{Scheduled: 2, Cancelled: 3})
				if moved, err := s.Requeue(ctx, queue, store.SetCancelled, ids(recs)); err != nil || slices.Contains(moved, false) {
					t.Fatalf("Requeue = %v, %v", moved, err)
				}
			}},
		}
		for _, op := range ops {
			got := claim(t, s, 10, op.lease)
			if want := []string{"h", "n", "l"}; !slices.Equal(ids(got.Jobs), want) {
				t.Fatalf("before %s: claimed %v, want %v", op.name, ids(got.Jobs), want)
			}
			inLevels("claimed", store.SetActive, ids(got.Jobs)...)
			stats("claimed", store.Stats{Scheduled: 2, Active: 3})
			op.back(t, got.Jobs)
			inLevels(op.name, store.SetDue, "h", "n", "l", "h-later", "l-later")
			stats(op.name, ready)
		}

		// Cancel takes a job that has not started out of its own level; a
		// purge of the cancelled set deletes it with its options.
		all := []string{"h", "n", "l", "h-later", "l-later"}
		for _, id := range all {
			if res, err := s.Cancel(ctx, queue, id); res != store.Cancelled || err != nil {
				t.Errorf("Cancel(%s) = %v, %v; want Cancelled", id, res, err)
			}
		}
		stats("all cancelled", store.Stats{Cancelled: 5})
		if gone, err := s.Purge(ctx, queue, store.SetCancelled, all, time.Time{}); err != nil || slices.Contains(gone, false) {
			t.Errorf("Purge of the cancelled = %v, %v", gone, err)
		}
		for _, key := range []string{k.Jobs, k.Due, k.DueHigh, k.DueLow, k.Opts, k.Cancelled} {
			if testkit.Exists(t, c, key) {
				t.Errorf("%s left behind: %v", key, levelStateOf(t, c, k))
			}
		}
	})
}

// TestPriorityDefaultQueueKeys: a queue whose jobs are all of the normal
// level, without unique keys or a retained id, never gets the keys of
// either: the scripts read none for it but one EXISTS.
func TestPriorityDefaultQueueKeys(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k, ctx := s.Keys(queue), t.Context()
		field := leaderField(t, s, c, queue)
		none := func(after string) {
			t.Helper()
			for _, key := range []string{k.DueHigh, k.DueLow, k.Opts, k.Unique, k.UniqueExp, k.Settings} {
				if testkit.Exists(t, c, key) {
					t.Errorf("after %s: %s exists", after, key)
				}
			}
		}
		// A caller's own id is no option while the queue retains no ids.
		enqueue(t, s, job("a", ""), job("b", ""), job("c", ""), store.NewJob{ID: "d", CallerID: true}, store.NewJob{ID: "later", Delay: time.Hour})
		none("enqueue")
		byID := map[string]store.Token{}
		for _, r := range claim(t, s, 10, time.Hour).Jobs {
			if r.Priority != store.PriorityNormal {
				t.Errorf("claimed %s with Priority %d", r.ID, r.Priority)
			}
			byID[r.ID] = r.Token()
		}
		if len(byID) != 4 {
			t.Fatalf("claimed %v, want a, b, c and d", byID)
		}
		none("claim")
		if n, err := s.Ack(ctx, queue, []store.Token{byID["a"]}); n != 1 || err != nil {
			t.Fatalf("Ack = %d, %v", n, err)
		}
		none("ack")
		if ok, err := s.Retry(ctx, queue, byID["b"], 0, "x"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		none("retry")
		if ok, err := s.Kill(ctx, queue, byID["c"], "x"); !ok || err != nil {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		none("kill")
		if n, err := s.Snooze(ctx, queue, []store.Token{byID["d"]}, 0); n != 1 || err != nil {
			t.Fatalf("Snooze = %d, %v", n, err)
		}
		none("snooze")
		if moved, err := s.Requeue(ctx, queue, store.SetDead, []string{"c"}); err != nil || !moved[0] {
			t.Fatalf("Requeue = %v, %v", moved, err)
		}
		none("requeue")
		if res, err := s.Cancel(ctx, queue, "later"); res != store.Cancelled || err != nil {
			t.Fatalf("Cancel = %v, %v", res, err)
		}
		none("cancel")
		got := claim(t, s, 10, shortLease)
		if res, err := s.Cancel(ctx, queue, got.Jobs[0].ID); res != store.CancelRunning || err != nil {
			t.Fatalf("Cancel = %v, %v", res, err)
		}
		none("cancel running")
		waitLeasesExpired(t, c, k, ids(got.Jobs[1:])...)
		if _, err := s.Recover(ctx, queue, field, 100, 1); err != nil {
			t.Fatal(err)
		}
		none("recover")
		if _, err := s.Purge(ctx, queue, store.SetDead, []string{"b", "c", "d"}, time.Time{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Stats(ctx, queue); err != nil {
			t.Fatal(err)
		}
		none("purge, stats")
	})
}
