package store_test

import (
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// previousFormat is every key a store of the previous record format wrote:
// the last version before the current format (cec5a5c, before 1720368 added
// the c4 record with headers), captured from real Redis. The capture
// enqueued nine jobs under prefix "old", queue "q": "running" claimed by
// process old-proc with a lease of 50 years; "dead" claimed and killed;
// "retried" claimed and retried at once; then "fresh", "own-limits" (7
// attempts, 5 s timeout), "high" (high priority), "unique" (key sku-1),
// "scheduled" (due in 2100) and "empty" (no payload). docs/upgrading.md
// promises that the current version reads such records; this file holds
// that promise.
const previousFormat = "testdata/record-c3-cec5a5c.json"

// storedKey is one key of a capture, named without its prefix.
type storedKey struct {
	Key    string            `json:"key"`
	Type   string            `json:"type"`
	String string            `json:"string,omitempty"`
	Hash   map[string]string `json:"hash,omitempty"`
	Zset   map[string]string `json:"zset,omitempty"` // member → score
	Set    []string          `json:"set,omitempty"`
}

// restore writes the capture in file under prefix, each key as it was
// stored, one command per key (on a Cluster each goes to its own slot).
func restore(t *testing.T, c rueidis.Client, prefix, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var keys []storedKey
	if err := json.Unmarshal(b, &keys); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, k := range keys {
		name := prefix + k.Key
		var cmd rueidis.Completed
		switch k.Type {
		case "string":
			cmd = c.B().Set().Key(name).Value(k.String).Build()
		case "hash":
			h := c.B().Hset().Key(name).FieldValue()
			for _, f := range slices.Sorted(maps.Keys(k.Hash)) {
				h = h.FieldValue(f, k.Hash[f])
			}
			cmd = h.Build()
		case "zset":
			args := []string{"ZADD", name}
			for _, m := range slices.Sorted(maps.Keys(k.Zset)) {
				args = append(args, k.Zset[m], m)
			}
			cmd = c.B().Arbitrary(args...).Build()
		case "set":
			cmd = c.B().Sadd().Key(name).Member(k.Set...).Build()
		default:
			t.Fatalf("%s: key %s of type %q", file, k.Key, k.Type)
		}
		if err := c.Do(t.Context(), cmd).Error(); err != nil {
			t.Fatalf("restore %s: %v", name, err)
		}
	}
}

// TestPreviousFormatIsRead: jobs stored by the previous record format are
// read by today's Get, List and Claim and finished by today's Ack, on
// single Redis and on a Cluster, with their attempts, limits, errors,
// options, payloads and the claim of a job an old process still runs.
func TestPreviousFormatIsRead(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		ctx := t.Context()
		prefix := s.Keys(queue).Jobs[:len(s.Keys(queue).Jobs)-len(":{q}:jobs")]
		restore(t, c, prefix, previousFormat)

		enqueued := time.UnixMilli(1796649790311)
		want := map[string]struct {
			set      store.Set
			attempt  int
			max      int
			timeout  time.Duration
			lastErr  string
			payload  string
			priority store.Priority
			unique   string
			worker   string
		}{
			"running":    {set: store.SetActive, attempt: 1, payload: "r", worker: "old-proc"},
			"dead":       {set: store.SetDead, attempt: 1, lastErr: "fatal: no such customer", payload: "d"},
			"retried":    {set: store.SetDue, attempt: 1, lastErr: "boom;\nline 2", payload: "x;1;2;\x00y"},
			"fresh":      {set: store.SetDue, payload: `{"order":42}`},
			"own-limits": {set: store.SetDue, max: 7, timeout: 5 * time.Second, payload: "limits"},
			"high":       {set: store.SetDue, payload: "h", priority: store.PriorityHigh},
			"unique":     {set: store.SetDue, payload: "u", unique: "sku-1"},
			"scheduled":  {set: store.SetDue, payload: "s"},
			"empty":      {set: store.SetDue},
		}
		for id, w := range want {
			snap, err := s.Get(ctx, queue, id)
			if err != nil {
				t.Errorf("Get %s: %v", id, err)
				continue
			}
			r := snap.Record
			if snap.Set != w.set || r.Attempt != w.attempt || r.MaxAttempts != w.max || r.Timeout != w.timeout ||
				r.LastError != w.lastErr || string(r.Payload) != w.payload || r.Priority != w.priority ||
				r.Unique.Key != w.unique || r.Worker != w.worker || r.Headers != nil {
				t.Errorf("Get %s: %s %+v; want %+v", id, snap.Set, r, w)
			}
			if id == "fresh" && !r.EnqueuedAt.Equal(enqueued) {
				t.Errorf("Get fresh: enqueued at %v, want %v", r.EnqueuedAt, enqueued)
			}
		}

		listed := func(what store.Listing) []string {
			page, err := s.List(ctx, queue, store.ListQuery{What: what, Limit: 100})
			if err != nil {
				t.Fatalf("List %s: %v", what, err)
			}
			var ids []string
			for _, j := range page.Jobs {
				if j.Err != nil {
					t.Errorf("List %s: %s: %v", what, j.Record.ID, j.Err)
				}
				ids = append(ids, j.Record.ID)
			}
			slices.Sort(ids)
			return ids
		}
		for what, ids := range map[store.Listing][]string{
			store.ListReady:     {"empty", "fresh", "high", "own-limits", "retried", "unique"},
			store.ListScheduled: {"scheduled"},
			store.ListActive:    {"running"},
		} {
			if got := listed(what); !slices.Equal(got, ids) {
				t.Errorf("List %s = %v, want %v", what, got, ids)
			}
		}

		claimed, err := s.ClaimWith(ctx, queue, 100, time.Minute, store.ClaimOptions{Process: "new-proc"})
		if err != nil {
			t.Fatal(err)
		}
		if len(claimed.Jobs) != 6 || claimed.Jobs[0].ID != "high" {
			t.Fatalf("claimed %d jobs, first %+v; want the 6 ready ones, high first", len(claimed.Jobs), claimed.Jobs)
		}
		toks := []store.Token{}
		for _, r := range claimed.Jobs {
			toks = append(toks, r.Token())
			w := want[r.ID]
			if r.Attempt != w.attempt+1 || r.MaxAttempts != w.max || r.Timeout != w.timeout || r.LastError != w.lastErr ||
				string(r.Payload) != w.payload || r.Priority != w.priority {
				t.Errorf("claimed %s: %+v; want attempt %d of %+v", r.ID, r, w.attempt+1, w)
			}
		}
		running, err := s.Get(ctx, queue, "running")
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, running.Record.Token())
		if n, err := s.Ack(ctx, queue, toks); n != len(toks) || err != nil {
			t.Fatalf("Ack of the claimed jobs and the old process's: %d, %v; want %d", n, err, len(toks))
		}
		for _, id := range []string{"fresh", "running", "retried"} {
			if _, err := s.Get(ctx, queue, id); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get %s after its ack: %v, want ErrNotFound", id, err)
			}
		}
	})
}
