package store_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// walkFiltered reads the dead set with dq's filter page by page and returns
// the ids listed and how many pages it took.
func walkFiltered(t *testing.T, s *store.Store, dq store.DeadQuery) (ids []string, pages int) {
	t.Helper()
	for pages = 1; pages < 1000; pages++ {
		page, err := s.Dead(t.Context(), queue, dq)
		if err != nil {
			t.Fatalf("Dead(%+v): %v", dq, err)
		}
		if len(page.Jobs) > dq.Limit {
			t.Fatalf("Dead(%+v) returned %d jobs", dq, len(page.Jobs))
		}
		for _, j := range page.Jobs {
			ids = append(ids, j.Record.ID)
		}
		if page.Next.IsZero() {
			return ids, pages
		}
		dq.After = page.Next
	}
	t.Fatal("the walk does not end")
	return nil, 0
}

func TestDeadFilter(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		const ms = 1_700_000_000_000
		// Errors in record headers (no state entry: read from the record)
		// and in state entries, which override the header.
		var entries []deadEntry
		for i, e := range []string{"Connection TIMEOUT", "boom", "timeout: x", "bad input", "read timeout", "é TimeOut"} {
			d := dead(fmt.Sprintf("d%d", i), ms+int64(i))
			d.rec.LastError = e
			entries = append(entries, d)
		}
		writeDead(t, c, k, entries...)
		do(t, c, c.B().Hset().Key(k.State).FieldValue().
			FieldValue("d1", "3;3;upstream timeout"). // header "boom", state matches
			FieldValue("d4", "3;3;refused").Build())  // header matches, state does not

		tests := []struct {
			name   string
			filter store.DeadFilter
			want   []string
		}{
			{"no filter", store.DeadFilter{}, []string{"d0", "d1", "d2", "d3", "d4", "d5"}},
			{"error, any case", store.DeadFilter{ErrorContains: "TimeOut"}, []string{"d0", "d1", "d2", "d5"}},
			{"error not found", store.DeadFilter{ErrorContains: "nothing"}, nil},
			{"error and after", store.DeadFilter{ErrorContains: "timeout", After: time.UnixMilli(ms + 1)}, []string{"d2", "d5"}},
			{"at or before", store.DeadFilter{AtOrBefore: time.UnixMilli(ms + 2)}, []string{"d0", "d1", "d2"}},
			{"after and at or before", store.DeadFilter{After: time.UnixMilli(ms), AtOrBefore: time.UnixMilli(ms + 3)}, []string{"d1", "d2", "d3"}},
		}
		for _, tt := range tests {
			for _, limit := range []int{1, 2, 100} {
				for _, idsOnly := range []bool{false, true} {
					got, _ := walkFiltered(t, s, store.DeadQuery{Limit: limit, Filter: tt.filter, IDsOnly: idsOnly})
					if !slices.Equal(got, tt.want) {
						t.Errorf("%s, limit %d, ids only %v: %v, want %v", tt.name, limit, idsOnly, got, tt.want)
					}
				}
			}
		}
		// Records read for their error count against max_bytes: one a page.
		if got, pages := walkFiltered(t, s, store.DeadQuery{Limit: 10, IDsOnly: true, MaxBytes: 1, Filter: store.DeadFilter{ErrorContains: "timeout"}}); !slices.Equal(got, []string{"d0", "d1", "d2", "d5"}) || pages < 4 {
			t.Errorf("max bytes 1: %v in %d pages", got, pages)
		}
	})
}

// TestDeadFilterBound: one call examines at most 250 jobs, so a filter
// that matches few of them returns short pages, empty even, with a Next.
func TestDeadFilterBound(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		const ms = 1_700_000_000_000
		var entries []deadEntry
		for i := range 2500 {
			d := dead(fmt.Sprintf("d%04d", i), ms)
			if i == 1200 || i == 2499 {
				d.rec.LastError = "needle"
			}
			entries = append(entries, d)
		}
		writeDead(t, c, k, entries...)
		q := store.DeadQuery{Limit: 10, Filter: store.DeadFilter{ErrorContains: "needle"}}
		page, err := s.Dead(t.Context(), queue, q)
		if err != nil || len(page.Jobs) != 0 || page.Next.ID != "d0249" {
			t.Fatalf("first page: %d jobs, next %+v, %v; want none, after d0249", len(page.Jobs), page.Next, err)
		}
		got, pages := walkFiltered(t, s, q)
		if !slices.Equal(got, []string{"d1200", "d2499"}) || pages != 10 {
			t.Errorf("walk: %v in %d pages, want d1200 and d2499 in 10", got, pages)
		}
	})
}
