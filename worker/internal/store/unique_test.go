package store_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// uniq returns a job due now holding the unique key key, without a window.
func uniq(id, key string) store.NewJob {
	return store.NewJob{ID: id, Unique: store.Unique{Key: key}}
}

// enqueueJobs enqueues jobs to q and returns what EnqueueJobs said of each.
func enqueueJobs(t *testing.T, s *store.Store, q string, jobs ...store.NewJob) []store.Enqueued {
	t.Helper()
	got, err := s.EnqueueJobs(t.Context(), store.Target{Partition: q, Version: -1}, jobs)
	if err != nil || len(got) != len(jobs) {
		t.Fatalf("EnqueueJobs = %v, %v; want %d results", got, err, len(jobs))
	}
	return got
}

// refused fails unless enqueueing j to q is refused for its unique key, held
// by holder, and writes nothing.
func refused(t *testing.T, s *store.Store, c rueidis.Client, q string, j store.NewJob, holder string) {
	t.Helper()
	k := s.Keys(q)
	before := levelStateOf(t, c, k)
	if got := enqueueJobs(t, s, q, j); got[0] != (store.Enqueued{Holder: holder}) {
		t.Errorf("enqueue %s with key %q = %+v, want refused for holder %s", j.ID, j.Unique.Key, got[0], holder)
	}
	levelsUnchanged(t, c, k, before)
}

// added fails unless enqueueing j to q adds it.
func added(t *testing.T, s *store.Store, q string, j store.NewJob) {
	t.Helper()
	if got := enqueueJobs(t, s, q, j); got[0] != (store.Enqueued{Added: true}) {
		t.Errorf("enqueue %s with key %q = %+v, want added", j.ID, j.Unique.Key, got[0])
	}
}

// uniqueEntry returns the unique hash's field f of q (k:<key> or i:<id>) as
// whether its job is live, the end of its window (ms, 0 = none) and the
// holder's id; ok is false when there is no such field.
func uniqueEntry(t *testing.T, s *store.Store, c rueidis.Client, q, f string) (live bool, until int64, id string, ok bool) {
	t.Helper()
	e, ok := testkit.HGet(t, c, s.Keys(q).Unique, f)
	if !ok {
		return false, 0, "", false
	}
	parts := strings.SplitN(e, ";", 3)
	if len(parts) != 3 || (parts[0] != "0" && parts[0] != "1") {
		t.Fatalf("unique entry %s = %q", f, e)
	}
	until, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		t.Fatalf("unique entry %s = %q", f, e)
	}
	return parts[0] == "1", until, parts[2], true
}

// waitRedisClock waits until the Redis clock reaches ms, when a window
// ending at ms no longer holds its key.
func waitRedisClock(t *testing.T, c rueidis.Client, ms int64) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, "the Redis clock to reach the end of the window", func() bool { return testkit.RedisNow(t, c) >= ms })
}

// ackAll claims every job due in q and acks them.
func ackAll(t *testing.T, s *store.Store, q string) []store.Record {
	t.Helper()
	got := claimFrom(t, s, q, store.MaxBatch, time.Hour)
	if n, err := s.Ack(t.Context(), q, tokens(got.Jobs)); err != nil || n != len(got.Jobs) {
		t.Fatalf("Ack = %d, %v; want %d", n, err, len(got.Jobs))
	}
	return got.Jobs
}

func TestUniqueRefusedWhileHeld(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		seed(t, s)
		added(t, s, queue, uniq("a", "k"))
		if snap := get(t, s, "a"); snap.Record.Unique != (store.Unique{Key: "k"}) {
			t.Errorf("Get(a).Unique = %+v", snap.Record.Unique)
		}
		// Due: refused, told the holder, nothing written.
		refused(t, s, c, queue, uniq("b", "k"), "a")
		if _, err := s.Get(t.Context(), queue, "b"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(b) = %v, want ErrNotFound", err)
		}
		// A higher level, a window or a caller's id do not get past it.
		refused(t, s, c, queue, store.NewJob{ID: "b", Priority: store.PriorityHigh, CallerID: true, Unique: store.Unique{Key: "k", For: time.Hour}}, "a")
		// Running: refused.
		if r := claimOne(t, s, time.Hour); r.ID != "a" {
			t.Fatalf("claimed %s, want a", r.ID)
		}
		refused(t, s, c, queue, uniq("b", "k"), "a")
		// Scheduled: refused.
		added(t, s, queue, store.NewJob{ID: "later", Delay: time.Hour, Unique: store.Unique{Key: "later"}})
		refused(t, s, c, queue, uniq("b", "later"), "later")

		// Within one call, a later copy of a key finds the first; the jobs
		// around it are added.
		k := s.Keys(queue)
		got := enqueueJobs(t, s, queue, uniq("x", "k2"), uniq("y", "k2"), job("z", ""), uniq("w", "k3"), uniq("v", "k3"))
		want := []store.Enqueued{{Added: true}, {Holder: "x"}, {Added: true}, {Added: true}, {Holder: "w"}}
		if !slices.Equal(got, want) {
			t.Errorf("EnqueueJobs = %+v, want %+v", got, want)
		}
		for _, id := range []string{"y", "v"} {
			if _, ok := testkit.HGet(t, c, k.Jobs, id); ok {
				t.Errorf("refused job %s has a record", id)
			}
			if _, ok := testkit.HGet(t, c, k.Opts, id); ok {
				t.Errorf("refused job %s has an options entry", id)
			}
		}
		wantUnique := map[string]string{"k:k": "1;0;a", "k:later": "1;0;later", "k:k2": "1;0;x", "k:k3": "1;0;w"}
		if got := testkit.HGetAll(t, c, k.Unique); !maps.Equal(got, wantUnique) {
			t.Errorf("unique hash = %v, want %v", got, wantUnique)
		}
		if testkit.Exists(t, c, k.UniqueExp) {
			t.Errorf("keys without a window wrote %s", k.UniqueExp)
		}

		// Keys are the queue's own.
		added(t, s, "other", uniq("b", "k"))

		// A holder's id that reads as a number is still an id, not the
		// script's 1 (added) or 0 (exists).
		for _, holder := range []string{"1", "0", "42", "-1"} {
			key := "numeric-" + holder
			added(t, s, queue, uniq(holder, key))
			refused(t, s, c, queue, uniq("n"+holder, key), holder)
		}
	})
}

// TestUniqueFreeAfterFinish: a key without a window is free again once its
// holder is acked, dead or cancelled, and held while it is retried, snoozed
// or recovered.
func TestUniqueFreeAfterFinish(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		tests := []struct {
			name  string
			lease time.Duration // the holder is claimed under it; 0 = not claimed
			end   func(t *testing.T, q string, r store.Record)
			free  bool
		}{
			{"ack", time.Hour, func(t *testing.T, q string, r store.Record) {
				if n, err := s.Ack(ctx, q, []store.Token{r.Token()}); n != 1 || err != nil {
					t.Fatalf("Ack = %d, %v", n, err)
				}
			}, true},
			{"kill", time.Hour, func(t *testing.T, q string, r store.Record) {
				if ok, err := s.Kill(ctx, q, r.Token(), "x"); !ok || err != nil {
					t.Fatalf("Kill = %v, %v", ok, err)
				}
			}, true},
			{"cancel due", 0, func(t *testing.T, q string, r store.Record) {
				if res, err := s.Cancel(ctx, q, r.ID); res != store.Cancelled || err != nil {
					t.Fatalf("Cancel = %v, %v", res, err)
				}
			}, true},
			{"cancel running", time.Hour, func(t *testing.T, q string, r store.Record) {
				if res, err := s.Cancel(ctx, q, r.ID); res != store.CancelRunning || err != nil {
					t.Fatalf("Cancel = %v, %v", res, err)
				}
			}, true},
			{"recover without attempts left", shortLease, func(t *testing.T, q string, r store.Record) {
				waitLeasesExpired(t, c, s.Keys(q), r.ID)
				if got, err := s.Recover(ctx, q, leaderField(t, s, c, q), 10, 1); got != (store.Recovered{Dead: 1}) || err != nil {
					t.Fatalf("Recover = %+v, %v", got, err)
				}
			}, true},
			{"retry", time.Hour, func(t *testing.T, q string, r store.Record) {
				if ok, err := s.Retry(ctx, q, r.Token(), 0, "x"); !ok || err != nil {
					t.Fatalf("Retry = %v, %v", ok, err)
				}
			}, false},
			{"snooze", time.Hour, func(t *testing.T, q string, r store.Record) {
				if n, err := s.Snooze(ctx, q, []store.Token{r.Token()}, 0); n != 1 || err != nil {
					t.Fatalf("Snooze = %d, %v", n, err)
				}
			}, false},
			{"recover with attempts left", shortLease, func(t *testing.T, q string, r store.Record) {
				waitLeasesExpired(t, c, s.Keys(q), r.ID)
				if got, err := s.Recover(ctx, q, leaderField(t, s, c, q), 10, 3); got != (store.Recovered{Due: 1}) || err != nil {
					t.Fatalf("Recover = %+v, %v", got, err)
				}
			}, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				q := strings.ReplaceAll(tt.name, " ", "-")
				added(t, s, q, uniq("first", "k"))
				r := store.Record{ID: "first"}
				if tt.lease > 0 {
					if r = claimFrom(t, s, q, 1, tt.lease).Jobs[0]; r.ID != "first" {
						t.Fatalf("claimed %s", r.ID)
					}
				}
				tt.end(t, q, r)
				if !tt.free {
					refused(t, s, c, q, uniq("second", "k"), "first")
					return
				}
				if _, _, _, ok := uniqueEntry(t, s, c, q, "k:k"); ok {
					t.Errorf("the key's entry is left behind")
				}
				added(t, s, q, uniq("second", "k"))
				if live, until, id, _ := uniqueEntry(t, s, c, q, "k:k"); !live || until != 0 || id != "second" {
					t.Errorf("k:k = %v, %d, %s; want held by second, without a window", live, until, id)
				}
			})
		}

		// A holder whose record was deleted by hand holds nothing.
		added(t, s, "by-hand", uniq("first", "k"))
		testkit.Do(t, c, c.B().Hdel().Key(s.Keys("by-hand").Jobs).Field("first").Build())
		added(t, s, "by-hand", uniq("second", "k"))
	})
}

func TestUniqueWindowFromEnqueue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		const window = time.Second
		before := testkit.RedisNow(t, c)
		added(t, s, queue, store.NewJob{ID: "a", Unique: store.Unique{Key: "k", For: window}})
		after := testkit.RedisNow(t, c)
		if snap := get(t, s, "a"); snap.Record.Unique != (store.Unique{Key: "k", For: window}) {
			t.Errorf("Get(a).Unique = %+v", snap.Record.Unique)
		}
		live, until, id, _ := uniqueEntry(t, s, c, queue, "k:k")
		if !live || id != "a" {
			t.Errorf("k:k = %v, %d, %s; want held by a", live, until, id)
		}
		inRange(t, "end of the window", until, before+window.Milliseconds(), after+window.Milliseconds())
		if score := mustScore(t, c, k.UniqueExp, "k:k"); score != until {
			t.Errorf("unique:exp has k:k at %d, want %d", score, until)
		}

		// Finished within its window: still refused until the window ends.
		ackAll(t, s, queue)
		if live, u, id, _ := uniqueEntry(t, s, c, queue, "k:k"); live || u != until || id != "a" {
			t.Errorf("after ack, k:k = %v, %d, %s; want a's window, not live", live, u, id)
		}
		if now := testkit.RedisNow(t, c); now >= until {
			t.Fatalf("the window ended (at %d, now %d) before the test could look: too slow", until, now)
		}
		refused(t, s, c, queue, uniq("b", "k"), "a")
		waitRedisClock(t, c, until)
		added(t, s, queue, uniq("b", "k"))

		// Live beyond its window: held until it finishes, and free then.
		added(t, s, queue, store.NewJob{ID: "c", Unique: store.Unique{Key: "k2", For: 50 * time.Millisecond}})
		_, until, _, _ = uniqueEntry(t, s, c, queue, "k:k2")
		waitRedisClock(t, c, until)
		refused(t, s, c, queue, uniq("d", "k2"), "c")
		ackAll(t, s, queue) // b and c
		added(t, s, queue, uniq("d", "k2"))
		added(t, s, queue, uniq("e", "k"))
	})
}

func TestUniqueWindowAfterFinish(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		const window = time.Second
		u := store.Unique{Key: "k", For: window, AfterFinish: true}
		added(t, s, queue, store.NewJob{ID: "a", Unique: u})
		snap := get(t, s, "a")
		if snap.Record.Unique != u {
			t.Errorf("Get(a).Unique = %+v, want %+v", snap.Record.Unique, u)
		}
		// No window while the job lives: held however long it waits.
		if live, until, id, _ := uniqueEntry(t, s, c, queue, "k:k"); !live || until != 0 || id != "a" {
			t.Errorf("k:k = %v, %d, %s; want held by a, no window yet", live, until, id)
		}
		if testkit.Exists(t, c, k.UniqueExp) {
			t.Errorf("a live key without a window yet is in %s", k.UniqueExp)
		}
		waitRedisClock(t, c, snap.Record.EnqueuedAt.UnixMilli()+window.Milliseconds())
		refused(t, s, c, queue, uniq("b", "k"), "a")

		// The window counts from the ack.
		r := claimOne(t, s, time.Hour)
		before := testkit.RedisNow(t, c)
		if n, err := s.Ack(t.Context(), queue, []store.Token{r.Token()}); n != 1 || err != nil {
			t.Fatalf("Ack = %d, %v", n, err)
		}
		after := testkit.RedisNow(t, c)
		live, until, id, _ := uniqueEntry(t, s, c, queue, "k:k")
		if live || id != "a" {
			t.Errorf("after ack, k:k = %v, %d, %s; want a's window", live, until, id)
		}
		inRange(t, "end of the window", until, before+window.Milliseconds(), after+window.Milliseconds())
		if score := mustScore(t, c, k.UniqueExp, "k:k"); score != until {
			t.Errorf("unique:exp has k:k at %d, want %d", score, until)
		}
		refused(t, s, c, queue, uniq("b", "k"), "a")
		waitRedisClock(t, c, until)
		added(t, s, queue, uniq("b", "k"))
	})
}

func TestExpireUnique(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k, ctx := s.Keys(queue), t.Context()
		const short = 100 * time.Millisecond
		if _, _, err := s.SetIDRetention(ctx, queue, short); err != nil {
			t.Fatal(err)
		}
		// Live past its window (never claimed): kept.
		added(t, s, queue, store.NewJob{ID: "live", Delay: time.Hour, Unique: store.Unique{Key: "live", For: short}})
		// Finished, windows that end soon: forgotten. Finished, a window of
		// an hour: kept.
		jobs := []store.NewJob{{ID: "rid", CallerID: true}, {ID: "future", Unique: store.Unique{Key: "future", For: time.Hour}},
			{ID: "re1", Unique: store.Unique{Key: "re", For: short}}}
		for i := range 5 {
			jobs = append(jobs, store.NewJob{ID: fmt.Sprint("u", i), Unique: store.Unique{Key: fmt.Sprint("u", i), For: short}})
		}
		enqueue(t, s, jobs...)
		if acked := ackAll(t, s, queue); len(acked) != len(jobs) {
			t.Fatalf("acked %v", ids(acked))
		}
		var last int64
		for f, score := range zsetOf(t, c, k.UniqueExp) {
			if f != "k:future" {
				last = max(last, int64(score))
			}
		}
		waitRedisClock(t, c, last)
		// Taken again without a window once free: its old window entry
		// goes, the field stays with its live holder.
		added(t, s, queue, store.NewJob{ID: "re2", Delay: time.Hour, Unique: store.Unique{Key: "re"}})
		if n := len(zsetOf(t, c, k.UniqueExp)); n != 9 {
			t.Fatalf("unique:exp holds %d entries, want 9: %v", n, zsetOf(t, c, k.UniqueExp))
		}

		// Not the leader: refused, nothing changed.
		leaderField(t, s, c, queue)
		before := levelStateOf(t, c, k)
		if got, err := s.ExpireUnique(ctx, queue, "other-client-uuid:leader", 10); !errors.Is(err, store.ErrNotLeader) {
			t.Errorf("ExpireUnique by another = %+v, %v; want ErrNotLeader", got, err)
		}
		levelsUnchanged(t, c, k, before)
		if _, err := s.ExpireUnique(ctx, queue, leaderField(t, s, c, queue), 0); err == nil {
			t.Error("ExpireUnique with limit 0 succeeded, want an error")
		}
		levelsUnchanged(t, c, k, before)

		// 8 window entries have ended: u0-u4 and i:rid are forgotten, live
		// and re are kept (held by live jobs), future is not looked at.
		field := leaderField(t, s, c, queue)
		var looked []int
		forgotten := 0
		for range 4 {
			got, err := s.ExpireUnique(ctx, queue, field, 3)
			if err != nil {
				t.Fatal(err)
			}
			if got.Forgotten > got.Looked {
				t.Errorf("ExpireUnique = %+v: forgot more than it looked at", got)
			}
			looked = append(looked, got.Looked)
			forgotten += got.Forgotten
		}
		if want := []int{3, 3, 2, 0}; !slices.Equal(looked, want) || forgotten != 6 {
			t.Errorf("ExpireUnique in batches of 3 looked at %v and forgot %d, want %v and 6", looked, forgotten, want)
		}
		if got, want := slices.Sorted(maps.Keys(testkit.HGetAll(t, c, k.Unique))), []string{"k:future", "k:live", "k:re"}; !slices.Equal(got, want) {
			t.Errorf("unique hash holds %v, want %v", got, want)
		}
		if got := slices.Sorted(maps.Keys(zsetOf(t, c, k.UniqueExp))); !slices.Equal(got, []string{"k:future"}) {
			t.Errorf("unique:exp holds %v, want k:future", got)
		}
		refused(t, s, c, queue, uniq("x", "live"), "live")
		refused(t, s, c, queue, uniq("x", "re"), "re2")
		refused(t, s, c, queue, uniq("x", "future"), "future")
		added(t, s, queue, uniq("x", "u0"))
		added(t, s, queue, store.NewJob{ID: "rid", CallerID: true})
	})
}

func TestUniqueRequeue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		kill := func(t *testing.T, q string) store.Record {
			t.Helper()
			r := claimFrom(t, s, q, 1, time.Hour).Jobs[0]
			if ok, err := s.Kill(ctx, q, r.Token(), "x"); !ok || err != nil {
				t.Fatalf("Kill = %v, %v", ok, err)
			}
			return r
		}
		requeue := func(t *testing.T, q, id string) {
			t.Helper()
			if moved, err := s.Requeue(ctx, q, store.SetDead, []string{id}); err != nil || !moved[0] {
				t.Fatalf("Requeue(%s) = %v, %v", id, moved, err)
			}
		}

		// The key is free: the requeued job holds it again.
		const q1 = "free"
		added(t, s, q1, uniq("a", "k"))
		kill(t, q1)
		requeue(t, q1, "a")
		refused(t, s, c, q1, uniq("b", "k"), "a")

		// Another job took the key meanwhile: the requeue still happens,
		// and the other keeps it, through the requeued job's end.
		const q2 = "taken"
		added(t, s, q2, uniq("a", "k"))
		kill(t, q2)
		added(t, s, q2, uniq("b", "k"))
		requeue(t, q2, "a")
		if snap, err := s.Get(ctx, q2, "a"); err != nil || snap.Set != store.SetDue || snap.Record.Unique.Key != "k" {
			t.Errorf("Get(a) = %+v, %v; want due, with its key", snap, err)
		}
		refused(t, s, c, q2, uniq("c", "k"), "b")
		byID := map[string]store.Token{}
		for _, r := range claimFrom(t, s, q2, 10, time.Hour).Jobs {
			byID[r.ID] = r.Token()
		}
		if n, err := s.Ack(ctx, q2, []store.Token{byID["a"]}); n != 1 || err != nil {
			t.Fatalf("Ack(a) = %d, %v", n, err)
		}
		refused(t, s, c, q2, uniq("c", "k"), "b")
		if n, err := s.Ack(ctx, q2, []store.Token{byID["b"]}); n != 1 || err != nil {
			t.Fatalf("Ack(b) = %d, %v", n, err)
		}
		added(t, s, q2, uniq("c", "k"))
	})
}

func TestIDRetention(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k, ctx := s.Keys(queue), t.Context()
		const retention = time.Second
		if _, _, err := s.SetIDRetention(ctx, queue, retention); err != nil {
			t.Fatal(err)
		}
		if v, _ := testkit.HGet(t, c, k.Settings, "id_retention"); v != "1000" {
			t.Errorf("settings id_retention = %q, want 1000", v)
		}
		mine := store.NewJob{ID: "mine", CallerID: true}
		gen := store.NewJob{ID: "gen"} // a generated id
		enqueue(t, s, mine, gen)
		if got := enqueueJobs(t, s, queue, mine, gen); !slices.Equal(got, []store.Enqueued{{}, {}}) {
			t.Errorf("enqueue of existing ids = %+v, want neither added", got)
		}
		before := testkit.RedisNow(t, c)
		ackAll(t, s, queue)
		after := testkit.RedisNow(t, c)
		live, until, id, ok := uniqueEntry(t, s, c, queue, "i:mine")
		if !ok || live || id != "mine" {
			t.Fatalf("i:mine = %v, %d, %s, %v; want mine retained", live, until, id, ok)
		}
		inRange(t, "end of the retention", until, before+retention.Milliseconds(), after+retention.Milliseconds())
		if _, _, _, ok := uniqueEntry(t, s, c, queue, "i:gen"); ok {
			t.Error("a generated id was retained")
		}
		// The generated id is free at once; the caller's is refused (not
		// added, no holder) until the retention ends.
		enqueue(t, s, gen)
		st := levelStateOf(t, c, k)
		if got := enqueueJobs(t, s, queue, mine); got[0] != (store.Enqueued{}) {
			t.Errorf("enqueue of a retained id = %+v, want not added", got[0])
		}
		levelsUnchanged(t, c, k, st)
		if _, err := s.Get(ctx, queue, "mine"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(mine) = %v, want ErrNotFound", err)
		}
		waitRedisClock(t, c, until)
		enqueue(t, s, mine)

		// Retained again, then the retention is removed: the id is free at
		// once (a call of caller ids only, with no retention, takes the
		// plain path).
		if _, _, err := s.SetIDRetention(ctx, queue, time.Hour); err != nil {
			t.Fatal(err)
		}
		ackAll(t, s, queue)
		if got := enqueueJobs(t, s, queue, mine); got[0] != (store.Enqueued{}) {
			t.Errorf("enqueue of an id retained for an hour = %+v, want not added", got[0])
		}

		// Without a retention, nothing is remembered.
		if _, _, err := s.SetIDRetention(ctx, queue, 0); err != nil {
			t.Fatal(err)
		}
		if _, ok := testkit.HGet(t, c, k.Settings, "id_retention"); ok {
			t.Error("SetIDRetention(0) left the setting")
		}
		enqueue(t, s, mine)
		enqueue(t, s, store.NewJob{ID: "mine-2", CallerID: true})
		ackAll(t, s, queue)
		if _, _, _, ok := uniqueEntry(t, s, c, queue, "i:mine-2"); ok {
			t.Error("an id was retained without a retention")
		}
		enqueue(t, s, store.NewJob{ID: "mine-2", CallerID: true})
	})
}

// TestUniqueMemory measures what a remembered unique key costs: the unique
// hash's field and the unique:exp zset's entry of a finished job with a
// window, 20-byte keys, 10-byte ids. The figure goes into the docs.
func TestUniqueMemory(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		const n = 2000
		jobs := make([]store.NewJob, n)
		for i := range jobs {
			key := fmt.Sprintf("key-%016d", i)
			jobs[i] = store.NewJob{ID: fmt.Sprintf("job-%06d", i), Unique: store.Unique{Key: key, For: time.Hour}}
		}
		enqueue(t, s, jobs...)
		for acked := 0; acked < n; {
			acked += len(ackAll(t, s, queue))
		}
		if st := levelStateOf(t, c, k); len(st.unique) != n || len(st.uniqueExp) != n || len(st.queue.Jobs) != 0 {
			t.Fatalf("after the acks: %d unique fields, %d window entries, %d jobs; want %d, %d, 0", len(st.unique), len(st.uniqueExp), len(st.queue.Jobs), n, n)
		}
		usage := func(key string) int64 {
			v, err := c.Do(t.Context(), c.B().Arbitrary("MEMORY", "USAGE").Keys(key).Args("SAMPLES", "0").Build()).AsInt64()
			if err != nil {
				t.Fatalf("MEMORY USAGE %s: %v", key, err)
			}
			return v
		}
		hash, zset := usage(k.Unique), usage(k.UniqueExp)
		per := float64(hash+zset) / n
		t.Logf("%d remembered keys (20-byte keys, 10-byte ids, a window): unique hash %d B (%.1f B/key), unique:exp %d B (%.1f B/key): %.1f B per key",
			n, hash, float64(hash)/n, zset, float64(zset)/n, per)
		if per <= 0 || per >= 1024 {
			t.Errorf("%.1f bytes per remembered key, want above 0 and under 1 KiB", per)
		}
	})
}

// TestUniqueCorruptRecordReleasesKey: a job whose record no longer decodes
// goes to dead when claimed; it has finished, so its unique key is free.
func TestUniqueCorruptRecordReleasesKey(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		added(t, s, queue, uniq("bad", "user:1"))
		do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue("bad", "garbage;bytes").Build())
		if got := claim(t, s, 10, time.Minute); got.Corrupt != 1 || len(got.Jobs) != 0 {
			t.Fatalf("claim = %+v, want the corrupt record moved to dead", got)
		}
		if _, _, _, ok := uniqueEntry(t, s, c, queue, "k:user:1"); ok {
			t.Errorf("the dead corrupt job still holds its unique key")
		}
		added(t, s, queue, uniq("next", "user:1"))
	})
}
