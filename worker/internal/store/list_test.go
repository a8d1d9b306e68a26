package store_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

// walkList reads a listing page by page, limit jobs each, and returns its
// jobs; every page but the last is full unless maxBytes cut it.
func walkList(t *testing.T, s *store.Store, what store.Listing, limit, maxBytes int) []store.ListedJob {
	t.Helper()
	var out []store.ListedJob
	q := store.ListQuery{What: what, Limit: limit, MaxBytes: maxBytes}
	for range 1000 {
		page, err := s.List(t.Context(), queue, q)
		if err != nil {
			t.Fatalf("List(%+v): %v", q, err)
		}
		out = append(out, page.Jobs...)
		if page.Next.IsZero() {
			return out
		}
		if maxBytes == 0 && len(page.Jobs) != limit {
			t.Fatalf("List(%+v): a page of %d jobs has a Next", q, len(page.Jobs))
		}
		q.After = page.Next
	}
	t.Fatalf("List(%s) did not end", what)
	return nil
}

func listedIDs(jobs []store.ListedJob) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Record.ID
	}
	return out
}

func TestListReadyAndScheduled(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		now := testkit.RedisNow(t, c)
		past, future := now-time.Hour.Milliseconds(), now+time.Hour.Milliseconds()
		high, normal, low := store.PriorityHigh, store.PriorityNormal, store.PriorityLow
		at := func(id string, p store.Priority, ms int64) store.NewJob {
			return store.NewJob{ID: id, At: time.UnixMilli(ms), Priority: p, Payload: []byte("payload of " + id)}
		}
		enqueue(t, s,
			at("n-b", normal, past), at("n-a", normal, past), at("h-1", high, past+1), at("h-0", high, past+2),
			at("l-0", low, past-5), at("n-c", normal, past-1),
			at("s-n1", normal, future), at("s-h1", high, future), at("s-l1", low, future+1), at("s-n0", normal, future-1),
			at("s-h0", high, future+2), at("s-l0", low, future-2),
		)
		wantReady := []string{"h-1", "h-0", "n-c", "n-a", "n-b", "l-0"}
		wantScheduled := []string{"s-l0", "s-n0", "s-h1", "s-n1", "s-l1", "s-h0"}
		level := map[byte]store.Priority{'h': high, 'n': normal, 'l': low}
		for _, limit := range []int{1, 2, 4, 100} {
			for what, want := range map[store.Listing][]string{store.ListReady: wantReady, store.ListScheduled: wantScheduled} {
				got := walkList(t, s, what, limit, 0)
				if ids := listedIDs(got); !slices.Equal(ids, want) {
					t.Fatalf("%s, %d a page: %v, want %v", what, limit, ids, want)
				}
				for _, j := range got {
					id := strings.TrimPrefix(j.Record.ID, "s-")
					if j.Err != nil || j.Record.Priority != level[id[0]] || string(j.Record.Payload) != "payload of "+j.Record.ID || j.Record.Claim != 0 {
						t.Errorf("%s: listed %+v (err %v)", what, j.Record, j.Err)
					}
				}
			}
		}
		// A record cap of one byte: one job a page, each listed once.
		if ids := listedIDs(walkList(t, s, store.ListReady, 10, 1)); !slices.Equal(ids, wantReady) {
			t.Errorf("ready with max bytes 1: %v", ids)
		}
		// A page starts after its cursor even when the cursor's job left.
		page, err := s.List(t.Context(), queue, store.ListQuery{What: store.ListScheduled, Limit: 3})
		if err != nil || page.Next.ID != "s-h1" {
			t.Fatalf("List = %+v, %v", page, err)
		}
		if _, err := s.Cancel(t.Context(), queue, "s-h1"); err != nil {
			t.Fatal(err)
		}
		page, err = s.List(t.Context(), queue, store.ListQuery{What: store.ListScheduled, Limit: 10, After: page.Next})
		if ids := listedIDs(page.Jobs); err != nil || !slices.Equal(ids, wantScheduled[3:]) || !page.Next.IsZero() {
			t.Errorf("after a cancelled cursor: %v, %v (next %+v)", ids, err, page.Next)
		}
	})
}

func TestListActive(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		var all []string
		for i := range 7 {
			id := "a" + strconv.Itoa(i)
			all = append(all, id)
			enqueue(t, s, job(id, "p"))
		}
		first, err := s.ClaimWith(t.Context(), queue, 4, time.Hour, store.ClaimOptions{Process: "proc-1"})
		if err != nil || len(first.Jobs) != 4 {
			t.Fatalf("Claim = %+v, %v", first, err)
		}
		second, err := s.ClaimWith(t.Context(), queue, 3, 2*time.Hour, store.ClaimOptions{})
		if err != nil || len(second.Jobs) != 3 {
			t.Fatalf("Claim = %+v, %v", second, err)
		}
		// A claims value of a version that did not record the process.
		old := first.Jobs[3]
		do(t, c, c.B().Hset().Key(k.Claims).FieldValue().FieldValue(old.ID, strconv.FormatInt(old.Claim, 10)).Build())
		if v, _ := testkit.HGet(t, c, k.Claims, first.Jobs[0].ID); v != strconv.FormatInt(first.Jobs[0].Claim, 10)+"@proc-1" {
			t.Errorf("claims value %q, want the token @proc-1", v)
		}
		claims := map[string]store.Record{}
		for _, r := range append(first.Jobs, second.Jobs...) {
			claims[r.ID] = r
		}
		for _, limit := range []int{1, 3, 100} {
			got := walkList(t, s, store.ListActive, limit, 0)
			if ids := listedIDs(got); !slices.Equal(ids, all) {
				t.Fatalf("active, %d a page: %v, want %v (by deadline, then id; no pin)", limit, ids, all)
			}
			for _, j := range got {
				want := claims[j.Record.ID]
				worker := "proc-1"
				if j.Record.ID == old.ID || slices.ContainsFunc(second.Jobs, func(r store.Record) bool { return r.ID == j.Record.ID }) {
					worker = ""
				}
				if j.Err != nil || j.Record.Claim != want.Claim || j.Record.Worker != worker || j.Record.Attempt != 1 {
					t.Errorf("listed %+v (err %v), want claim %d, worker %q, attempt 1", j.Record, j.Err, want.Claim, worker)
				}
				if d := mustScore(t, c, k.Active, j.Record.ID); j.Score.UnixMilli() != d {
					t.Errorf("%s: score %v, want the lease deadline %d", j.Record.ID, j.Score, d)
				}
			}
		}
		if snap := get(t, s, "a0"); snap.Record.Worker != "proc-1" || snap.Record.Claim != claims["a0"].Claim {
			t.Errorf("Get(a0) = %+v", snap.Record)
		}
		if snap := get(t, s, old.ID); snap.Record.Worker != "" || snap.Record.Claim != old.Claim {
			t.Errorf("Get(%s), an old claims value, = %+v", old.ID, snap.Record)
		}
	})
}

// TestClaimsWithProcess runs the scripts that read a claims value on jobs
// claimed with a process recorded, and on an old bare token: each takes
// the token before the '@'.
func TestClaimsWithProcess(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		enqueue(t, s, job("ack", "p"), job("extend", "p"), job("retry", "p"), job("old", "p"))
		got, err := s.ClaimWith(t.Context(), queue, 4, time.Hour, store.ClaimOptions{Process: "host-1-ab"})
		if err != nil || len(got.Jobs) != 4 {
			t.Fatalf("Claim = %+v, %v", got, err)
		}
		tok := map[string]store.Token{}
		for _, r := range got.Jobs {
			if r.Worker != "host-1-ab" {
				t.Errorf("claimed %s with Worker %q", r.ID, r.Worker)
			}
			tok[r.ID] = r.Token()
		}
		do(t, c, c.B().Hset().Key(k.Claims).FieldValue().FieldValue("old", strconv.FormatInt(tok["old"].Claim, 10)).Build())
		// A token that is a prefix of the stored one is not the claim.
		short := store.Token{ID: "extend", Claim: tok["extend"].Claim / 10}
		lost, err := s.Extend(t.Context(), storetest.Renewals(map[string][]store.Token{queue: {tok["extend"], tok["old"], short}}), time.Hour)
		if err != nil || len(lost[queue]) != 1 || lost[queue][0].Token != short {
			t.Fatalf("Extend = %+v, %v; want only the short token lost", lost, err)
		}
		if n, err := s.Ack(t.Context(), queue, []store.Token{tok["ack"], tok["old"]}); err != nil || n != 2 {
			t.Fatalf("Ack = %d, %v", n, err)
		}
		if _, err := s.Get(t.Context(), queue, "ack"); err == nil {
			t.Error("the acked job is still there")
		}
		if _, err := s.Get(t.Context(), queue, "old"); err == nil {
			t.Error("the acked job with an old claims value is still there")
		}
		if ok, err := s.Retry(t.Context(), queue, tok["retry"], 0, "boom"); err != nil || !ok {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		if snap := get(t, s, "retry"); snap.Set != store.SetDue {
			t.Errorf("retried job in %s", snap.Set)
		}
	})
}
