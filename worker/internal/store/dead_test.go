package store_test

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// deadEntry is a dead job written straight into Redis, as retry.lua and
// recover.lua leave one: its record, and its time of death as its score.
type deadEntry struct {
	died int64 // ms
	rec  store.Record
}

// dead returns an entry for id that died at ms, with a record of its own.
func dead(id string, ms int64) deadEntry {
	return deadEntry{died: ms, rec: store.Record{
		ID: id, Attempt: 3, MaxAttempts: 3, Timeout: time.Second, EnqueuedAt: time.UnixMilli(ms - 1000),
		LastError: "error of " + id, Payload: []byte("payload of " + id),
	}}
}

// writeDead puts entries into the dead set of the queue with keys k.
func writeDead(t *testing.T, c rueidis.Client, k store.Keys, entries ...deadEntry) {
	t.Helper()
	if len(entries) == 0 {
		return
	}
	hset := c.B().Hset().Key(k.Jobs).FieldValue()
	zadd := c.B().Zadd().Key(k.Dead).ScoreMember()
	for _, e := range entries {
		hset = hset.FieldValue(e.rec.ID, store.EncodeRecord(e.rec))
		zadd = zadd.ScoreMember(float64(e.died), e.rec.ID)
	}
	do(t, c, hset.Build())
	do(t, c, zadd.Build())
}

// deadPos is a job's position in a dead set.
type deadPos struct {
	ID   string
	Died int64 // ms
}

func (p deadPos) String() string { return fmt.Sprintf("%s@%d", p.ID, p.Died) }

// deadOrder returns the members of a dead set (as state reads it) in the
// set's order: by time of death, then by id bytes (Go compares strings so).
func deadOrder(set map[string]float64) []deadPos {
	out := make([]deadPos, 0, len(set))
	for id, score := range set {
		out = append(out, deadPos{ID: id, Died: int64(score)})
	}
	slices.SortFunc(out, func(a, b deadPos) int { return cmp.Or(cmp.Compare(a.Died, b.Died), strings.Compare(a.ID, b.ID)) })
	return out
}

// afterCursor returns the positions of order strictly after cur.
func afterCursor(order []deadPos, cur store.DeadCursor) []deadPos {
	if cur.IsZero() {
		return order
	}
	ms := cur.DiedAt.UnixMilli()
	i, _ := slices.BinarySearchFunc(order, cur, func(p deadPos, _ store.DeadCursor) int {
		return cmp.Or(cmp.Compare(p.Died, ms), strings.Compare(p.ID, cur.ID))
	})
	if i < len(order) && order[i].Died == ms && order[i].ID == cur.ID {
		i++
	}
	return order[i:]
}

// positions returns where the jobs of a page are.
func positions(jobs []store.DeadJob) []deadPos {
	out := make([]deadPos, len(jobs))
	for i, j := range jobs {
		out[i] = deadPos{ID: j.Record.ID, Died: j.DiedAt.UnixMilli()}
	}
	return out
}

// deadPage reads one page and fails on an error.
func deadPage(t *testing.T, s *store.Store, q string, dq store.DeadQuery) store.DeadPage {
	t.Helper()
	page, err := s.Dead(t.Context(), q, dq)
	if err != nil {
		t.Fatalf("Dead(%+v): %v", dq, err)
	}
	if len(page.Jobs) > dq.Limit {
		t.Fatalf("Dead(%+v) returned %d jobs", dq, len(page.Jobs))
	}
	if !page.Next.IsZero() {
		last := page.Jobs[len(page.Jobs)-1]
		if page.Next.ID != last.Record.ID || !page.Next.DiedAt.Equal(last.DiedAt) {
			t.Fatalf("Next = %+v, want the page's last job %s at %v", page.Next, last.Record.ID, last.DiedAt)
		}
	}
	return page
}

// walkDead reads the dead set of q page by page from dq.After and returns
// its jobs. Unless the records are large, every page but the last is full.
func walkDead(t *testing.T, s *store.Store, q string, dq store.DeadQuery) []store.DeadJob {
	t.Helper()
	var out []store.DeadJob
	for pages := 1; ; pages++ {
		if pages > 100_000 {
			t.Fatal("the walk does not end")
		}
		page := deadPage(t, s, q, dq)
		out = append(out, page.Jobs...)
		if page.Next.IsZero() {
			return out
		}
		if dq.MaxBytes == 0 && len(page.Jobs) != dq.Limit {
			t.Fatalf("page %d holds %d jobs of %d and is not the last", pages, len(page.Jobs), dq.Limit)
		}
		dq.After = page.Next
	}
}

// trickyIDs sort differently by bytes than by any locale's collation.
var trickyIDs = []string{"a", "A", "aa", "a0", "ab", "B", "b", "Z", "_", "~", "é", "e", "Ω", "z9", "a:b", "0", "10", "9"}

func TestDeadPages(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		const n = 2500
		base := testkit.RedisNow(t, c) - time.Hour.Milliseconds()
		rng := rand.New(rand.NewPCG(1, 2))
		entries := make([]deadEntry, n)
		byID := make(map[string]store.Record, n)
		for i := range entries {
			id := trickyIDs[i%len(trickyIDs)] + strconv.Itoa(i)
			entries[i] = dead(id, base+int64(rng.IntN(300))) // about 8 jobs per ms
			entries[i].rec.Attempt = 1 + i%5
			byID[id] = entries[i].rec
		}
		writeDead(t, c, k, entries...)
		want := deadOrder(state(t, c, k).Dead)
		if len(want) != n {
			t.Fatalf("wrote %d dead jobs, want %d", len(want), n)
		}

		for _, limit := range []int{store.MaxBatch, 7} {
			got := walkDead(t, s, queue, store.DeadQuery{Limit: limit})
			if !slices.Equal(positions(got), want) {
				t.Fatalf("limit %d: the walk returned %d jobs, not the set's %d in order", limit, len(got), len(want))
			}
			for _, j := range got {
				if j.Err != nil || !sameRecord(j.Record, byID[j.Record.ID]) {
					t.Fatalf("limit %d: job %+v, want record %+v", limit, j, byID[j.Record.ID])
				}
			}
		}
		ids := walkDead(t, s, queue, store.DeadQuery{Limit: store.MaxBatch, IDsOnly: true})
		if !slices.Equal(positions(ids), want) {
			t.Fatalf("ids only: %d jobs, not the set's %d in order", len(ids), len(want))
		}
		if j := ids[0]; j.Record.Payload != nil || j.Record.LastError != "" || j.Err != nil {
			t.Errorf("ids only: job %+v carries more than its id", j)
		}
		// The first page of 1,000 ends exactly where the second starts.
		first := deadPage(t, s, queue, store.DeadQuery{Limit: store.MaxBatch})
		if first.Next.ID != want[store.MaxBatch-1].ID {
			t.Errorf("first page ends at %+v, want %v", first.Next, want[store.MaxBatch-1])
		}
	})
}

func TestDeadSameMillisecond(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		// One recover call kills every expired job at the same ms.
		var jobs []store.NewJob
		for i := range 40 {
			jobs = append(jobs, store.NewJob{ID: trickyIDs[i%len(trickyIDs)] + strconv.Itoa(i/len(trickyIDs)), MaxAttempts: 1})
		}
		enqueueTo(t, s, "recovered", jobs...)
		got := claimFrom(t, s, "recovered", 100, shortLease)
		if len(got.Jobs) != len(jobs) {
			t.Fatalf("claimed %d jobs, want %d", len(got.Jobs), len(jobs))
		}
		k := s.Keys("recovered")
		waitLeasesExpired(t, c, k, ids(got.Jobs)...)
		if rec, err := s.Recover(t.Context(), "recovered", leaderField(t, s, c, "recovered"), 100, 3); err != nil || rec.Dead != len(jobs) {
			t.Fatalf("Recover = %+v, %v; want %d dead", rec, err, len(jobs))
		}

		// Written directly: 60 jobs at one ms between two others.
		direct := s.Keys("direct")
		ms := testkit.RedisNow(t, c) - 5000
		entries := []deadEntry{dead("before", ms-1), dead("after", ms+1)}
		for i := range 60 {
			entries = append(entries, dead(trickyIDs[i%len(trickyIDs)]+strconv.Itoa(i/len(trickyIDs)), ms))
		}
		writeDead(t, c, direct, entries...)

		for q, keys := range map[string]store.Keys{"recovered": k, "direct": direct} {
			want := deadOrder(state(t, c, keys).Dead)
			if q == "recovered" && want[0].Died != want[len(want)-1].Died {
				t.Fatalf("recover killed its jobs at different times: %v", want)
			}
			for _, limit := range []int{1, 2, 3, 5, 8} {
				if got := positions(walkDead(t, s, q, store.DeadQuery{Limit: limit})); !slices.Equal(got, want) {
					t.Errorf("%s, limit %d:\n got %v\nwant %v", q, limit, got, want)
				}
			}
		}
	})
}

// TestDeadCursorStable changes the dead set between two pages: the second
// page starts right after the first page's last job, whether or not that
// job is still in the set.
func TestDeadCursorStable(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ms := testkit.RedisNow(t, c) - time.Hour.Milliseconds()
		initial := []deadEntry{dead("early1", ms-1), dead("early2", ms-1), dead("late1", ms+1), dead("late2", ms+1)}
		for i := 1; i <= 6; i++ {
			initial = append(initial, dead(fmt.Sprint("m", i), ms))
		}
		ctx := t.Context()
		purge := func(q string, ids ...string) {
			t.Helper()
			if del, err := s.Purge(ctx, q, store.SetDead, ids, time.Time{}); err != nil || slices.Contains(del, false) {
				t.Fatalf("Purge(%v) = %v, %v", ids, del, err)
			}
		}
		requeue := func(q string, ids ...string) {
			t.Helper()
			if moved, err := s.Requeue(ctx, q, store.SetDead, ids); err != nil || slices.Contains(moved, false) {
				t.Fatalf("Requeue(%v) = %v, %v", ids, moved, err)
			}
		}
		tests := []struct {
			name   string
			first  int // size of the first page
			change func(q string, k store.Keys)
			want   []string // the second page, 4 at most
			more   bool
		}{
			{"nothing changes", 4, func(string, store.Keys) {}, []string{"m3", "m4", "m5", "m6"}, true},
			{"cursor job purged", 4, func(q string, _ store.Keys) { purge(q, "m2") }, []string{"m3", "m4", "m5", "m6"}, true},
			{"cursor job and the next requeued", 4, func(q string, _ store.Keys) { requeue(q, "m2", "m3") }, []string{"m4", "m5", "m6", "late1"}, true},
			{"cursor job requeued and dead again", 4, func(q string, _ store.Keys) {
				requeue(q, "m2")
				r := claimFrom(t, s, q, 1, time.Hour).Jobs[0]
				if ok, err := s.Kill(ctx, q, r.Token(), "again"); !ok || err != nil {
					t.Fatalf("Kill(%s) = %v, %v", r.ID, ok, err)
				}
			}, []string{"m3", "m4", "m5", "m6"}, true},
			{"cursor job moved earlier", 4, func(_ string, k store.Keys) {
				do(t, c, c.B().Zadd().Key(k.Dead).ScoreMember().ScoreMember(float64(ms-1), "m2").Build())
			}, []string{"m3", "m4", "m5", "m6"}, true},
			{"jobs join on both sides of the cursor", 4, func(_ string, k store.Keys) {
				writeDead(t, c, k, dead("m1a", ms), dead("m2a", ms), dead("m0", ms+1))
			}, []string{"m2a", "m3", "m4", "m5"}, true},
			{"last job of its ms purged", 8, func(q string, _ store.Keys) { purge(q, "m6") }, []string{"late1", "late2"}, false},
			{"its whole ms purged", 4, func(q string, _ store.Keys) { purge(q, "m1", "m2", "m3", "m4", "m5", "m6") }, []string{"late1", "late2"}, false},
			{"everything after it purged", 4, func(q string, _ store.Keys) { purge(q, "m2", "m3", "m4", "m5", "m6", "late1", "late2") }, nil, false},
		}
		for i, tt := range tests {
			q := fmt.Sprint("q", i)
			k := s.Keys(q)
			writeDead(t, c, k, initial...)
			page := deadPage(t, s, q, store.DeadQuery{Limit: tt.first})
			tt.change(q, k)
			next := deadPage(t, s, q, store.DeadQuery{Limit: 4, After: page.Next})
			var got []string
			for _, j := range next.Jobs {
				got = append(got, j.Record.ID)
			}
			if !slices.Equal(got, tt.want) || next.Next.IsZero() == tt.more {
				t.Errorf("%s: second page %v (next %+v), want %v (more %v)", tt.name, got, next.Next, tt.want, tt.more)
			}
			// The same, as a model of the set's order computes it.
			wantPos := afterCursor(deadOrder(state(t, c, k).Dead), page.Next)
			if !slices.Equal(positions(next.Jobs), wantPos[:min(4, len(wantPos))]) {
				t.Errorf("%s: second page %v, the model says %v", tt.name, positions(next.Jobs), wantPos)
			}
		}
	})
}

func TestDeadUntil(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		ms := testkit.RedisNow(t, c) - time.Hour.Milliseconds()
		future := testkit.RedisNow(t, c) + time.Hour.Milliseconds() // as if dead after the walk began
		writeDead(t, c, k, dead("a", ms-1), dead("b", ms), dead("c", ms), dead("d", ms+1), dead("later", future))

		until := time.UnixMilli(ms)
		if got := positions(walkDead(t, s, queue, store.DeadQuery{Limit: 1, Until: until})); !slices.Equal(got, []deadPos{{"a", ms - 1}, {"b", ms}, {"c", ms}}) {
			t.Errorf("until %d: %v", ms, got)
		}
		// A page that reaches the bound has no next, though jobs follow it.
		if page := deadPage(t, s, queue, store.DeadQuery{Limit: 3, Until: until}); len(page.Jobs) != 3 || !page.Next.IsZero() {
			t.Errorf("the page up to the bound: %v, next %+v", positions(page.Jobs), page.Next)
		}

		before := testkit.RedisNow(t, c)
		page := deadPage(t, s, queue, store.DeadQuery{Limit: 10, UntilNow: true, IDsOnly: true})
		after := testkit.RedisNow(t, c)
		inRange(t, "Now", page.Now.UnixMilli(), before, after)
		if got := positions(page.Jobs); len(got) != 4 || got[3].ID != "d" || !page.Next.IsZero() {
			t.Errorf("until now: %v, next %+v; want a b c d and no more", got, page.Next)
		}
		// The later pages of a walk pass the first page's clock.
		rest := walkDead(t, s, queue, store.DeadQuery{Limit: 1, Until: page.Now, After: store.DeadCursor{DiedAt: page.Jobs[1].DiedAt, ID: "b"}})
		if got := positions(rest); len(got) != 2 || got[0].ID != "c" || got[1].ID != "d" {
			t.Errorf("until %v after b: %v", page.Now, got)
		}
		if got := positions(walkDead(t, s, queue, store.DeadQuery{Limit: 2})); len(got) != 5 || got[4].ID != "later" {
			t.Errorf("no bound: %v", got)
		}
	})
}

func TestDeadLargeRecords(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		ms := testkit.RedisNow(t, c)
		var entries []deadEntry
		for i := range 5 {
			e := dead(fmt.Sprint("big", i), ms)
			e.rec.Payload = bytes.Repeat([]byte{'x'}, 1000)
			entries = append(entries, e)
		}
		writeDead(t, c, k, entries...)
		for _, tt := range []struct {
			maxBytes int
			sizes    []int
		}{
			{2500, []int{2, 2, 1}}, // records of about 1,040 bytes
			{10, []int{1, 1, 1, 1, 1}},
			{1 << 20, []int{5}},
		} {
			var sizes []int
			var all []store.DeadJob
			for q := (store.DeadQuery{Limit: 10, MaxBytes: tt.maxBytes}); ; {
				page := deadPage(t, s, queue, q)
				sizes = append(sizes, len(page.Jobs))
				all = append(all, page.Jobs...)
				if page.Next.IsZero() {
					break
				}
				q.After = page.Next
			}
			if !slices.Equal(sizes, tt.sizes) || len(all) != 5 || len(all[4].Record.Payload) != 1000 {
				t.Errorf("max %d bytes: pages of %v, want %v", tt.maxBytes, sizes, tt.sizes)
			}
		}
	})
}

func TestDeadUnreadableRecords(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s)
		before := state(t, c, k)
		// No record; not a record; a record Lua accepts but Go refuses (its
		// timeout passes a time.Duration).
		do(t, c, c.B().Hset().Key(k.Jobs).FieldValue().FieldValue("junk", "junk").FieldValue("huge", "c3;1;0;999999999999999;0;0;").Build())
		do(t, c, c.B().Zadd().Key(k.Dead).ScoreMember().ScoreMember(1, "ghost").ScoreMember(2, "junk").ScoreMember(3, "huge").Build())

		got := walkDead(t, s, queue, store.DeadQuery{Limit: 2})
		if ids := positions(got); len(ids) != 4 || ids[0].ID != "ghost" || ids[1].ID != "junk" || ids[2].ID != "huge" || ids[3].ID != "seed-dead" {
			t.Fatalf("listed %v", ids)
		}
		for _, j := range got[:3] {
			if !errors.Is(j.Err, store.ErrCorrupt) || j.Record.ID == "" || j.Record.Payload != nil {
				t.Errorf("job %+v: want an ErrCorrupt and only the id", j)
			}
		}
		if got[3].Err != nil || got[3].Record.LastError != "seeded" {
			t.Errorf("seed-dead: %+v", got[3])
		}
		// They can be purged, leaving no trace.
		if del, err := s.Purge(t.Context(), queue, store.SetDead, []string{"ghost", "junk", "huge"}, time.Time{}); err != nil || slices.Contains(del, false) {
			t.Fatalf("Purge = %v, %v", del, err)
		}
		unchanged(t, c, k, before)
	})
}

func TestDeadBadLimit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s)
		before := state(t, c, k)
		for _, limit := range []int{0, -1, store.MaxBatch + 1} {
			if _, err := s.Dead(t.Context(), queue, store.DeadQuery{Limit: limit}); err == nil || !strings.Contains(err.Error(), "limit") {
				t.Errorf("Dead with limit %d: err = %v, want one naming the limit", limit, err)
			}
		}
		if _, err := s.Dead(t.Context(), queue, store.DeadQuery{Limit: 1, After: store.DeadCursor{DiedAt: time.UnixMilli(-1), ID: "x"}}); err == nil {
			t.Error("Dead after a cursor before 1970: no error")
		}
		unchanged(t, c, k, before)
	})
}

func TestPurge(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		seed(t, s)
		ms := testkit.RedisNow(t, c) - time.Hour.Milliseconds()
		writeDead(t, c, k, dead("d1", ms-1), dead("d2", ms), dead("d3", ms+1))
		before := state(t, c, k)

		del, err := s.Purge(t.Context(), queue, store.SetDead, []string{"seed-due", "seed-active", "missing", "d1", "d1", "seed-dead"}, time.Time{})
		if want := []bool{false, false, false, true, false, true}; err != nil || !slices.Equal(del, want) {
			t.Errorf("Purge = %v, %v; want %v", del, err, want)
		}
		for _, id := range []string{"d1", "seed-dead"} {
			delete(before.Jobs, id)
			delete(before.Dead, id)
			delete(before.State, id) // seed-dead's, written by its Kill
		}
		unchanged(t, c, k, before)

		// A bound spares the jobs that died after it.
		del, err = s.Purge(t.Context(), queue, store.SetDead, []string{"d3", "d2"}, time.UnixMilli(ms))
		if want := []bool{false, true}; err != nil || !slices.Equal(del, want) {
			t.Errorf("Purge until %d = %v, %v; want %v", ms, del, err, want)
		}
		if snap := get(t, s, "d3"); snap.Set != store.SetDead {
			t.Errorf("d3 is %s after a purge it should have survived", snap.Set)
		}

		// More than one script call.
		var entries []deadEntry
		var all []string
		for i := range 1100 {
			entries = append(entries, dead(fmt.Sprintf("many%04d", i), ms))
			all = append(all, fmt.Sprintf("many%04d", i))
		}
		writeDead(t, c, k, entries...)
		all = append(all, "seed-due", "missing")
		del, err = s.Purge(t.Context(), queue, store.SetDead, all, time.Time{})
		if err != nil || len(del) != len(all) || slices.Contains(del[:1100], false) || slices.Contains(del[1100:], true) {
			t.Errorf("Purge of %d ids = %d flags, %v", len(all), len(del), err)
		}
		if st, err := s.Stats(t.Context(), queue); err != nil || st != (store.Stats{Scheduled: 1, Active: 1, Dead: 1}) {
			t.Errorf("Stats = %+v, %v; want the seeded due and active jobs and d3", st, err)
		}
	})
}
