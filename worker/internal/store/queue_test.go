package store_test

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestQueueRecord: queue_set.lua's changes of partition 0's record, each a
// new revision, a setting already so none; and the layout's
// compare-and-set.
func TestQueueRecord(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		const q = "rec"
		rec, err := s.ReadQueue(ctx, q)
		if err != nil || rec.Rev != 0 || rec.Layout.Partitions != 1 || rec.Layout.Version != 0 || rec.Paused || rec.IDRetention != 0 {
			t.Fatalf("record of a new queue = %+v, %v; want the zero record of one partition", rec, err)
		}
		if testkit.Exists(t, c, s.Keys(q).Settings) {
			t.Error("reading the record wrote it")
		}
		r1, changed, err := s.SetIDRetention(ctx, q, time.Hour)
		if err != nil || !changed || r1.Rev <= 0 || r1.IDRetention != time.Hour {
			t.Fatalf("SetIDRetention = %+v, %t, %v", r1, changed, err)
		}
		if r, changed, err := s.SetIDRetention(ctx, q, time.Hour); err != nil || changed || r.Rev != r1.Rev {
			t.Errorf("the same retention again = %+v, %t, %v; want no change, the same revision", r, changed, err)
		}
		r2, changed, err := s.SetPaused(ctx, q, true)
		if err != nil || !changed || !r2.Paused || r2.Rev <= r1.Rev {
			t.Fatalf("SetPaused = %+v, %t, %v; want a newer revision", r2, changed, err)
		}
		if paused, _ := s.Paused(ctx, q); !paused {
			t.Error("the pause flag is not set")
		}

		// The layout is published only at the revision the caller read.
		if _, ok, err := s.PublishLayout(ctx, q, r1.Rev, store.Layout{Partitions: 4}, store.Share{I: 0, M: 4}); ok || err != nil {
			t.Fatalf("layout at an old revision: ok=%t, %v; want refused", ok, err)
		}
		r3, ok, err := s.PublishLayout(ctx, q, r2.Rev, store.Layout{Partitions: 4, Prev: []int{2}}, store.Share{I: 0, M: 5})
		if err != nil || !ok || r3.Rev <= r2.Rev || r3.Layout.Version != r3.Rev || r3.Layout.Partitions != 4 || !slices.Equal(r3.Layout.Prev, []int{2}) {
			t.Fatalf("PublishLayout = %+v, %t, %v", r3, ok, err)
		}
		if !r3.Paused || r3.IDRetention != time.Hour {
			t.Errorf("the layout lost the settings: %+v", r3)
		}
		// Older versions read the number of partitions from these fields.
		if got := field(t, c, s.Keys(q).Settings, "partitions"); got != "4" {
			t.Errorf("settings partitions = %q; want 4", got)
		}
		if got := field(t, c, s.Keys(q).Settings, "share"); got != "0;5" {
			t.Errorf("partition 0's share = %q; want 0;5", got)
		}
		r4, ok, err := s.PublishLayout(ctx, q, r3.Rev, store.Layout{Partitions: 1}, store.Share{I: 0, M: 1})
		if err != nil || !ok || r4.Layout.Partitions != 1 || r4.Layout.Version <= r3.Layout.Version {
			t.Fatalf("back to one partition = %+v, %t, %v", r4, ok, err)
		}
		if field(t, c, s.Keys(q).Settings, "partitions") != "" {
			t.Error("a queue back to one partition keeps the field older versions read")
		}
	})
}

// TestQueueCopy: a partition takes the record only when it is newer, and
// a retirement by a layout newer than the copy's stays.
func TestQueueCopy(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		const q = "copy"
		p := store.PartitionNames(q, 3)[2]
		rec := store.QueueRecord{Rev: 100, Layout: store.Layout{Version: 90, Partitions: 3}, IDRetention: time.Minute, Paused: true}
		one := []store.PartitionCopy{{Partition: p, Serves: true, Share: store.Share{I: 2, M: 3}}}
		if err := s.CopyQueue(ctx, rec, one); err != nil {
			t.Fatal(err)
		}
		k := s.Keys(p)
		if paused, _ := s.Paused(ctx, p); !paused {
			t.Error("the copy did not pause the partition")
		}
		for f, want := range map[string]string{"rev": "100", "v": "90", "partitions": "3", "id_retention": "60000", "share": "2;3"} {
			if got := field(t, c, k.Settings, f); got != want {
				t.Errorf("settings %s = %q; want %q", f, got, want)
			}
		}
		// An older record, sent late, changes nothing.
		old := store.QueueRecord{Rev: 99, Layout: store.Layout{Version: 90, Partitions: 3}}
		if err := s.CopyQueue(ctx, old, one); err != nil {
			t.Fatal(err)
		}
		if paused, _ := s.Paused(ctx, p); !paused || field(t, c, k.Settings, "id_retention") != "60000" {
			t.Error("an older copy overwrote a newer one")
		}

		// Retired by a layout being written (version 150): a copy of the
		// layout of version 90 that serves it leaves the retirement, one
		// of a layout at least as new lifts it.
		if err := s.Retire(ctx, []string{p}, 150); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EnqueueJobs(ctx, store.Target{Partition: p, Version: 90}, []store.NewJob{job("a", "")}); !errors.Is(err, store.ErrRetired) {
			t.Fatalf("enqueue to a retired partition: %v; want ErrRetired", err)
		}
		if err := s.CopyQueue(ctx, store.QueueRecord{Rev: 120, Layout: store.Layout{Version: 90, Partitions: 3}}, one); err != nil {
			t.Fatal(err)
		}
		if field(t, c, k.Settings, "retired") != "150" {
			t.Error("a copy of an older layout lifted a newer retirement")
		}
		if paused, _ := s.Paused(ctx, p); paused {
			t.Error("the newer copy did not resume the partition")
		}
		if err := s.CopyQueue(ctx, store.QueueRecord{Rev: 160, Layout: store.Layout{Version: 160, Partitions: 3}}, one); err != nil {
			t.Fatal(err)
		}
		if field(t, c, k.Settings, "retired") != "" {
			t.Error("a copy of a newer layout that serves the partition did not lift its retirement")
		}
		// A copy of a layout that does not serve it retires it.
		drop := []store.PartitionCopy{{Partition: p, Serves: false, Share: store.Share{I: 2, M: 3}}}
		if err := s.CopyQueue(ctx, store.QueueRecord{Rev: 170, Layout: store.Layout{Version: 170, Partitions: 2, Prev: []int{3}}}, drop); err != nil {
			t.Fatal(err)
		}
		if got := field(t, c, k.Settings, "retired"); got != "170" {
			t.Errorf("retired = %q after a layout that drains it; want 170", got)
		}
	})
}

// TestEnqueueChecksTheRoute: an enqueue sent by a layout older than the
// partition's is refused, with the partition's layout, and writes nothing;
// one by the same or a newer layout is taken; partition 0 without a
// version takes anything.
func TestEnqueueChecksTheRoute(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		const q = "route"
		rec, ok, err := s.PublishLayout(ctx, q, 0, store.Layout{Partitions: 3, Prev: []int{2}}, store.Share{I: 0, M: 4})
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		v := rec.Layout.Version
		_, err = s.EnqueueJobs(ctx, store.Target{Partition: q, Version: v - 1}, []store.NewJob{job("stale", "")})
		var stale *store.StaleLayoutError
		if !errors.As(err, &stale) || !stale.Known || stale.Layout.Version != v || stale.Layout.Partitions != 3 || !slices.Equal(stale.Layout.Prev, []int{2}) {
			t.Fatalf("enqueue by an older layout: %v (%+v); want the partition's layout", err, stale)
		}
		for _, ver := range []int64{v, v + 1} {
			if res, err := s.EnqueueJobs(ctx, store.Target{Partition: q, Version: ver}, []store.NewJob{job("ok", "")}); err != nil || len(res) != 1 {
				t.Fatalf("enqueue by version %d: %v, %v", ver, res, err)
			}
		}
		if res, err := s.EnqueueJobs(ctx, store.Target{Partition: q, Version: -1}, []store.NewJob{job("unchecked", "")}); err != nil || !res[0].Added {
			t.Fatalf("unchecked enqueue to partition 0: %v, %v", res, err)
		}
		// A partition that holds no layout refuses a caller that has one:
		// the queue was forgotten or Redis lost it.
		p := store.PartitionNames(q, 3)[1]
		_, err = s.EnqueueJobs(ctx, store.Target{Partition: p, Version: v}, []store.NewJob{job("x", "")})
		if !errors.As(err, &stale) || stale.Known {
			t.Fatalf("enqueue to a partition without a layout: %v; want an unknown layout", err)
		}
		if testkit.Exists(t, c, s.Keys(p).Jobs) {
			t.Error("a refused enqueue wrote a job")
		}
		if res, err := s.EnqueueJobs(ctx, store.Target{Partition: p, Version: 0}, []store.NewJob{job("x", "")}); err != nil || !res[0].Added {
			t.Errorf("enqueue of a caller without a layout to a partition without one: %v, %v", res, err)
		}
	})
}

// TestClaimTakesItsShareOfTheLimit: a partition's claim takes its share of
// the queue's limit, as its settings say, whatever the caller's number of
// partitions.
func TestClaimTakesItsShareOfTheLimit(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		parts := store.PartitionNames("share", 4)
		rec := store.QueueRecord{Rev: 10, Layout: store.Layout{Version: 10, Partitions: 4}}
		var copies []store.PartitionCopy
		for i, p := range parts[1:] {
			copies = append(copies, store.PartitionCopy{Partition: p, Serves: true, Share: store.Share{I: i + 1, M: 4}})
		}
		if err := s.CopyQueue(ctx, rec, copies); err != nil {
			t.Fatal(err)
		}
		// A partition just added takes nothing for a window of the limit
		// (see TestShareGrowsAWindowLate), then its share.
		limit := store.Rate{N: 10, Per: 300 * time.Millisecond}
		for i, p := range parts[1:] {
			jobs := make([]store.NewJob, 10)
			for j := range jobs {
				jobs[j] = job(string(rune('a'+j)), "")
			}
			if _, err := s.Enqueue(ctx, p, jobs); err != nil {
				t.Fatal(err)
			}
			var got store.Claimed
			testkit.Eventually(t, 2*time.Second, "the added partition's share to apply", func() bool {
				var err error
				if got, err = s.ClaimLimited(ctx, p, 10, time.Minute, limit); err != nil {
					t.Fatal(err)
				}
				return len(got.Jobs) > 0
			})
			// 10 over 4: 3, 3, 2, 2; partitions 1, 2, 3 take 3, 2, 2.
			if want := []int{3, 2, 2}[i]; len(got.Jobs) != want {
				t.Errorf("partition %d claimed %d of a limit of 10 shared by 4; want %d", i+1, len(got.Jobs), want)
			}
		}
		// A cap (a layout being written) applies while it is smaller:
		// partition 1's share of 10 in 8 is 2 (it had 3), until a copy of
		// the record lifts it. (Its claims above are in the window.)
		if err := s.CapShares(ctx, []store.PartitionCopy{{Partition: parts[1], Share: store.Share{I: 1, M: 8}}}, nil); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"x1", "x2", "x3", "x4"} {
			if _, err := s.Enqueue(ctx, parts[1], []store.NewJob{job(id, "")}); err != nil {
				t.Fatal(err)
			}
		}
		shortWindow := store.Rate{N: 10, Per: time.Millisecond}
		testkit.Eventually(t, time.Second, "the window to pass", func() bool {
			got, err := s.ClaimLimited(ctx, parts[1], 10, time.Minute, shortWindow)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Jobs) > 2 {
				t.Fatalf("a capped partition claimed %d; want at most 2", len(got.Jobs))
			}
			return len(got.Jobs) == 2
		})
		if err := s.CopyQueue(ctx, store.QueueRecord{Rev: 11, Layout: rec.Layout}, copies[:1]); err != nil {
			t.Fatal(err)
		}
		if field(t, c, s.Keys(parts[1]).Settings, "share_next") != "" {
			t.Error("a copy of the record left the cap")
		}

		// A queue never split has no share: the whole limit.
		if _, err := s.Enqueue(ctx, "whole", []store.NewJob{job("1", ""), job("2", ""), job("3", "")}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ClaimLimited(ctx, "whole", 10, time.Minute, store.Rate{N: 3, Per: time.Hour}); err != nil || len(got.Jobs) != 3 {
			t.Errorf("claim of a queue never split = %d jobs, %v; want 3", len(got.Jobs), err)
		}
	})
}

// field reads one field of a hash ("" when absent).
func field(t *testing.T, c rueidis.Client, key, f string) string {
	t.Helper()
	v, _ := testkit.HGet(t, c, key, f)
	return v
}

// TestShareGrowsAWindowLate: a partition whose share of the limit grows
// (its layout lost partitions) claims by its old share until a window of
// the limit has passed since, while the claims the dropped partitions made
// may still be in it; a share that shrinks applies at once.
func TestShareGrowsAWindowLate(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		p := store.PartitionNames("grow", 4)[1]
		copyShare := func(rev int64, sh store.Share) {
			t.Helper()
			rec := store.QueueRecord{Rev: rev, Layout: store.Layout{Version: rev, Partitions: sh.M}}
			if err := s.CopyQueue(ctx, rec, []store.PartitionCopy{{Partition: p, Serves: true, Share: sh}}); err != nil {
				t.Fatal(err)
			}
		}
		copyShare(10, store.Share{I: 1, M: 4}) // 2 of 8
		jobs := make([]store.NewJob, 8)
		for i := range jobs {
			jobs[i] = job("j"+strconv.Itoa(i), "")
		}
		if _, err := s.Enqueue(ctx, p, jobs); err != nil {
			t.Fatal(err)
		}
		limit := store.Rate{N: 8, Per: 400 * time.Millisecond}
		claim := func() int {
			t.Helper()
			got, err := s.ClaimLimited(ctx, p, 10, time.Minute, limit)
			if err != nil {
				t.Fatal(err)
			}
			return len(got.Jobs)
		}
		// Added: nothing for a window of the limit, then its share.
		if n := claim(); n != 0 {
			t.Fatalf("a partition just added claimed %d; want 0 for a window", n)
		}
		var n int
		testkit.Eventually(t, 2*time.Second, "the first share to apply", func() bool { n = claim(); return n > 0 })
		if n != 2 {
			t.Fatalf("claimed %d of a share of 2", n)
		}
		copyShare(20, store.Share{I: 1, M: 2}) // 4 of 8, a window late
		if n := claim(); n != 0 {
			t.Errorf("claimed %d more right after the share grew; want 0 until a window passed", n)
		}
		testkit.Eventually(t, 2*time.Second, "the grown share to apply", func() bool { return claim() > 0 })
		// Shrinking applies at once: 1 of 8 now, and the window holds none
		// of its claims yet... after one more window.
		copyShare(30, store.Share{I: 3, M: 8})
		testkit.Eventually(t, 2*time.Second, "a window to pass", func() bool {
			got, err := s.ClaimLimited(ctx, p, 10, time.Minute, limit)
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Jobs) > 1 {
				t.Fatalf("claimed %d under a share of 1", len(got.Jobs))
			}
			return len(got.Jobs) == 1
		})
		if was := field(t, c, s.Keys(p).Settings, "share_was"); strings.Count(was, ",") != 2 || !strings.HasPrefix(was, "1;2;") || !strings.Contains(was, ",0;0;") {
			t.Errorf("share_was = %q; want the shares replaced, newest first, the first none", was)
		}
	})
}
