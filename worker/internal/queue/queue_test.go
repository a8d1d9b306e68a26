package queue_test

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/queue"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func forEachBackend(t *testing.T, f func(t *testing.T, s *store.Store, c rueidis.Client)) {
	t.Helper()
	for name, connect := range map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := connect(t)
			f(t, store.New(c, testkit.Prefix(t), nil), c)
		})
	}
}

// settings reads a partition's settings hash.
func settings(t *testing.T, c rueidis.Client, s *store.Store, p string) map[string]string {
	t.Helper()
	return testkit.HGetAll(t, c, s.Keys(p).Settings)
}

// TestConcurrentChangesAgree: layout changes, pauses and retentions written
// at once by several writers leave every partition of the final layout
// with partition 0's record, every dropped partition retired, and the
// pause where the last pause left it.
func TestConcurrentChangesAgree(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		const q = "agree"
		for round := range 5 {
			var wg sync.WaitGroup
			var mu sync.Mutex
			var errs []error
			record := func(err error) {
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
			for w := range 4 {
				wg.Go(func() { // a daemon starting with its number
					y := queue.New(s)
					_, err := y.Serve(ctx, q, []int{1, 3, 4, 6}[(round+w)%4])
					record(err)
				})
			}
			paused := round%2 == 0
			for w := range 3 {
				wg.Go(func() { // operators and daemons' reports
					y := queue.New(s)
					for i := range 5 {
						if w == 0 {
							_, err := y.SetPaused(ctx, q, paused == (i%2 == 0))
							record(err)
						} else {
							record(y.SetIDRetention(ctx, q, time.Duration(round*10+w)*time.Minute))
						}
					}
				})
			}
			wg.Wait()
			if len(errs) > 0 {
				t.Fatalf("round %d: %v", round, errors.Join(errs...))
			}
			// The last pause of the round: pause (i = 4 → paused == true)
			y := queue.New(s)
			rec, err := y.Read(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Paused != paused {
				t.Errorf("round %d: paused = %t; want %t", round, rec.Paused, paused)
			}
			all := rec.Layout.All(q)
			for i, p := range all[1:] {
				got := settings(t, c, s, p)
				if got["rev"] != strconv.FormatInt(rec.Rev, 10) {
					t.Errorf("round %d: partition %s holds rev %s; partition 0 %d", round, p, got["rev"], rec.Rev)
				}
				if got["id_retention"] != strconv.FormatInt(rec.IDRetention.Milliseconds(), 10) {
					t.Errorf("round %d: partition %s retention %s; want %s", round, p, got["id_retention"], rec.IDRetention)
				}
				isPaused, _ := s.Paused(ctx, p)
				if isPaused != rec.Paused {
					t.Errorf("round %d: partition %s paused=%t; partition 0 %t", round, p, isPaused, rec.Paused)
				}
				served := slices.Contains(rec.Layout.Names(q), p)
				if _, retired := got["retired"]; retired == served {
					t.Errorf("round %d: partition %s served=%t retired=%t", round, p, served, retired)
				}
				if want := fmt.Sprintf("%d;%d", i+1, len(all)); got["share"] != want {
					t.Errorf("round %d: partition %s share %s; want %s", round, p, got["share"], want)
				}
			}
		}
	})
}

// TestServeKeepsPartitionsThatHoldJobs: a layout that drops partitions
// holding jobs keeps them, draining, until a later start finds them empty.
func TestServeKeepsPartitionsThatHoldJobs(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		const q = "drain"
		y := queue.New(s)
		four := store.PartitionNames(q, 4)
		if serve, err := y.Serve(ctx, q, 4); err != nil || !slices.Equal(serve, four) {
			t.Fatalf("Serve 4 = %v, %v", serve, err)
		}
		if _, err := s.Enqueue(ctx, four[3], []store.NewJob{{ID: "left"}}); err != nil {
			t.Fatal(err)
		}
		serve, err := y.Serve(ctx, q, 2)
		if err != nil {
			t.Fatal(err)
		}
		if want := append(slices.Clone(store.PartitionNames(q, 2)), four[3]); !slices.Equal(serve, want) {
			t.Errorf("Serve 2 = %v; want %v (the layout's, then the one holding a job)", serve, want)
		}
		rec, _ := y.Read(ctx, q)
		if rec.Layout.Partitions != 2 || !slices.Equal(rec.Layout.Prev, []int{4}) {
			t.Errorf("layout = %+v; want 2 draining 4", rec.Layout)
		}
		// Emptied: the next start drops it.
		testkit.Del(t, c, s.Keys(four[3]).Jobs)
		if serve, err := y.Serve(ctx, q, 2); err != nil || len(serve) != 2 {
			t.Errorf("Serve 2 again = %v, %v; want the two partitions only", serve, err)
		}
		if rec, _ := y.Read(ctx, q); len(rec.Layout.Prev) != 0 {
			t.Errorf("layout = %+v; want nothing draining", rec.Layout)
		}
		// Back to one: nothing draining, the queue reads as never split.
		if serve, err := y.Serve(ctx, q, 1); err != nil || !slices.Equal(serve, []string{q}) {
			t.Errorf("Serve 1 = %v, %v", serve, err)
		}
	})
}

// TestRefused: what a producer does after a refusal of its routing.
func TestRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, _ rueidis.Client) {
		ctx := t.Context()
		const q = "refused"
		y := queue.New(s)
		if _, err := y.Serve(ctx, q, 3); err != nil {
			t.Fatal(err)
		}
		now, err := y.Layout(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		old := store.Layout{Version: now.Version - 1, Partitions: 2}

		// A refusal that carries a newer layout: route by it.
		next, fallback, err := y.Refused(ctx, q, old, &store.StaleLayoutError{Layout: now, Known: true})
		if err != nil || fallback || next.Version != now.Version {
			t.Errorf("stale = %+v, %t, %v; want the newer layout", next, fallback, err)
		}
		// Retired, and partition 0 has a newer layout: route by it.
		if next, fallback, err := y.Refused(ctx, q, old, store.ErrRetired); err != nil || fallback || next.Version != now.Version {
			t.Errorf("retired, newer at 0 = %+v, %t, %v; want partition 0's layout", next, fallback, err)
		}
		// Retired, and nothing newer (a change under way): partition 0.
		if _, fallback, err := y.Refused(ctx, q, now, store.ErrRetired); err != nil || !fallback {
			t.Errorf("retired, nothing newer = %t, %v; want the fallback", fallback, err)
		}
		if _, fallback, err := y.Refused(ctx, q, now, &store.StaleLayoutError{}); err != nil || !fallback {
			t.Errorf("unknown layout, nothing newer = %t, %v; want the fallback", fallback, err)
		}
		other := errors.New("boom")
		if _, _, err := y.Refused(ctx, q, now, other); !errors.Is(err, other) {
			t.Errorf("another error = %v; want it returned", err)
		}
		// Route keeps the newest layout learned.
		if l, err := y.Route(ctx, q); err != nil || l.Version != now.Version {
			t.Errorf("Route = %+v, %v", l, err)
		}
	})
}

// TestAddedPartitionStartsFromNone: a partition a layout adds again, after
// an earlier layout dropped it, claims nothing for a window of the limit,
// whatever share it held before: the claims of the partitions it takes
// jobs from may still be in the window.
func TestAddedPartitionStartsFromNone(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, _ rueidis.Client) {
		ctx := t.Context()
		const q = "readded"
		y := queue.New(s)
		p := store.PartitionNames(q, 2)[1]
		limit := store.Rate{N: 10, Per: 300 * time.Millisecond}
		for _, n := range []int{2, 1} {
			if _, err := y.Serve(ctx, q, n); err != nil {
				t.Fatal(err)
			}
		}
		// Long after: the share it had when it was first added has left
		// every window.
		dropped := time.Now()
		testkit.Eventually(t, 2*time.Second, "a window to pass", func() bool { return time.Since(dropped) > 2*limit.Per })
		if _, err := y.Serve(ctx, q, 2); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Enqueue(ctx, p, []store.NewJob{{ID: "a"}, {ID: "b"}}); err != nil {
			t.Fatal(err)
		}
		added := time.Now()
		got, err := s.ClaimLimited(ctx, p, 10, time.Minute, limit)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Jobs) != 0 && time.Since(added) < limit.Per {
			t.Fatalf("a partition added again claimed %d at once; want none for a window", len(got.Jobs))
		}
		testkit.Eventually(t, 2*time.Second, "its share to apply", func() bool {
			got, err := s.ClaimLimited(ctx, p, 10, time.Minute, limit)
			if err != nil {
				t.Fatal(err)
			}
			return len(got.Jobs) == 2
		})
	})
}

// TestStartReplacesACapLeftBehind: a change that marked a partition added
// (it claims nothing until a copy) and never published leaves no mark
// behind once a daemon starts with the layout as it is.
func TestStartReplacesACapLeftBehind(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		const q = "capped"
		y := queue.New(s)
		if _, err := y.Serve(ctx, q, 2); err != nil {
			t.Fatal(err)
		}
		p := store.PartitionNames(q, 2)[1]
		if err := s.CapShares(ctx, []store.PartitionCopy{{Partition: p, Share: store.Share{I: 1, M: 2}}}, []string{p}); err != nil {
			t.Fatal(err)
		}
		if _, err := y.Serve(ctx, q, 2); err != nil {
			t.Fatal(err)
		}
		if got := settings(t, c, s, p)["share_next"]; got == "0;0" {
			t.Errorf("share_next = %q after a start with the layout as it is; want the partition's share", got)
		}
	})
}

// TestServeAdoptsALayoutOfAnOlderVersion: a layout written by a version
// before the record (the field partitions alone) gets a version and every
// partition its share of a rate limit at the next start.
func TestServeAdoptsALayoutOfAnOlderVersion(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		const q = "legacy"
		testkit.Do(t, c, c.B().Hset().Key(s.Keys(q).Settings).FieldValue().FieldValue("partitions", "3").Build())
		y := queue.New(s)
		serve, err := y.Serve(ctx, q, 3)
		if err != nil || len(serve) != 3 {
			t.Fatalf("Serve = %v, %v", serve, err)
		}
		rec, err := y.Read(ctx, q)
		if err != nil || rec.Layout.Version == 0 || rec.Layout.Partitions != 3 {
			t.Fatalf("record = %+v, %v; want a versioned layout of 3", rec, err)
		}
		for i, p := range serve {
			if got, want := settings(t, c, s, p)["share"], fmt.Sprintf("%d;3", i); got != want {
				t.Errorf("partition %s share = %q; want %q", p, got, want)
			}
		}
	})
}
