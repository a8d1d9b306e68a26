package store_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// TestProgressRidesTheExtension: a progress report goes out with the lease
// renewal, in the same call, into the claims value; Get and List read it
// back beside the process; a renewal without a report keeps it, a later one
// replaces it, a stale claim's report is dropped, and the ack (which checks
// the token in that same value) still matches, with or without a process.
func TestProgressRidesTheExtension(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("a-named", "1"), job("b-bare", "2"))
		named, err := s.ClaimWith(t.Context(), queue, 1, time.Minute, store.ClaimOptions{Process: "host-1"})
		if err != nil || len(named.Jobs) != 1 {
			t.Fatalf("ClaimWith = %v, %v", named, err)
		}
		bare := claimOne(t, s, time.Minute) // a claim that names no process
		n, b := named.Jobs[0], bare

		before := testkit.RedisNow(t, c)
		extend := func(rs ...store.Renewal) []store.Lost {
			t.Helper()
			lost, err := s.Extend(t.Context(), map[string][]store.Renewal{queue: rs}, time.Minute)
			if err != nil {
				t.Fatalf("Extend: %v", err)
			}
			return lost[queue]
		}
		extend(store.Renewal{Token: n.Token(), Progress: &store.Progress{Percent: 42.5, Message: "step 2; of 4"}},
			store.Renewal{Token: b.Token(), Progress: &store.Progress{Percent: 100}})
		after := testkit.RedisNow(t, c)

		check := func(what, id, worker string, pct float64, msg string) {
			t.Helper()
			r := get(t, s, id).Record
			if r.Worker != worker || r.Progress == nil || r.Progress.Percent != pct || r.Progress.Message != msg {
				t.Fatalf("%s: worker %q progress %+v, want %q %v %q", what, r.Worker, r.Progress, worker, pct, msg)
			}
			inRange(t, what+" updated at", r.Progress.UpdatedAt.UnixMilli(), before, after+1000)
		}
		check("named", "a-named", "host-1", 42.5, "step 2; of 4")
		check("bare", "b-bare", "", 100, "")
		if v, _ := testkit.HGet(t, c, k.Claims, "b-bare"); !strings.HasPrefix(v, strconv.FormatInt(b.Claim, 10)+"@\n100;") {
			t.Errorf("claims value of a claim without a process = %q, want the token, '@', then the progress", v)
		}

		// A renewal without a report keeps the progress; a new one replaces it.
		extend(store.Renewal{Token: n.Token()})
		check("kept", "a-named", "host-1", 42.5, "step 2; of 4")
		extend(store.Renewal{Token: n.Token(), Progress: &store.Progress{Percent: 80, Message: "almost"}})
		check("replaced", "a-named", "host-1", 80, "almost")

		// List shows it too.
		page, err := s.List(t.Context(), queue, store.ListQuery{What: store.ListActive, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range page.Jobs {
			if j.Record.ID == "a-named" && (j.Record.Progress == nil || j.Record.Progress.Percent != 80 || j.Record.Worker != "host-1") {
				t.Errorf("listed named: worker %q progress %+v", j.Record.Worker, j.Record.Progress)
			}
		}

		// A stale claim's report is dropped and its lease reported lost.
		stale := store.Token{ID: "a-named", Claim: n.Claim - 1}
		if lost := extend(store.Renewal{Token: stale, Progress: &store.Progress{Percent: 1, Message: "stale"}}); len(lost) != 1 {
			t.Errorf("stale renewal lost %v, want it", lost)
		}
		check("after a stale report", "a-named", "host-1", 80, "almost")

		// The acks match the tokens in values that carry progress.
		if acked, err := s.Ack(t.Context(), queue, []store.Token{n.Token(), b.Token()}); err != nil || acked != 2 {
			t.Fatalf("Ack = %d, %v; want 2", acked, err)
		}
		if _, ok := testkit.HGet(t, c, k.Claims, "a-named"); ok {
			t.Error("the claims entry (and its progress) outlived the ack")
		}
	})
}

// TestProgressLeavesWithTheAttempt: a retried job's next attempt starts
// without the progress of the one before.
func TestProgressLeavesWithTheAttempt(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, _ rueidis.Client) {
		enqueue(t, s, job("a", "1"))
		first := claimOne(t, s, time.Minute)
		if _, err := s.Extend(t.Context(), map[string][]store.Renewal{queue: {{Token: first.Token(), Progress: &store.Progress{Percent: 10}}}}, time.Minute); err != nil {
			t.Fatal(err)
		}
		if ok, err := s.Retry(t.Context(), queue, first.Token(), 0, "again"); err != nil || !ok {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		if p := get(t, s, "a").Record.Progress; p != nil {
			t.Errorf("due job has progress %+v", p)
		}
		claimOne(t, s, time.Minute)
		if p := get(t, s, "a").Record.Progress; p != nil {
			t.Errorf("second attempt starts with progress %+v", p)
		}
	})
}
