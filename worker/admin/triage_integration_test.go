package admin_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
)

// triageSetup is a queue "q" with 30 dead jobs d-0000 … d-0029, one a
// second, the even ones with a timeout error, and one due job "alive".
func triageSetup(t *testing.T, rdb rueidis.Client, prefix string) (*workertest.Client, []string) {
	t.Helper()
	c := workertest.NewClient(t, rdb, workertest.Config(t, prefix))
	ids := numbered("d", 30)
	ms := testkit.RedisNow(t, rdb) - time.Minute.Milliseconds()
	writeDeadErrs(t, rdb, prefix, "q", ids, func(i int) int64 { return ms + int64(i)*1000 }, func(i int) string {
		if i%2 == 0 {
			return "read: i/o TIMEOUT"
		}
		return "bad input"
	})
	workertest.Enqueue(t, c, worker.JobSpec{Queue: "q", ID: "alive"})
	return c, ids
}

// evens returns the ids at even positions.
func evens(ids []string) []string {
	var out []string
	for i, id := range ids {
		if i%2 == 0 {
			out = append(out, id)
		}
	}
	return out
}

// selection and walk are the halves of a TriageParams as these tests
// compose them: which dead jobs, and how to walk them.
type selection struct {
	IDs    []string
	Filter admin.DeadFilter
}

type walk struct {
	DryRun bool
	Cursor string
	Max    int
}

// triage runs a Triage of action on queue with sel and opt.
func triage(ctx context.Context, c *workertest.Client, action admin.TriageAction, queue string, sel selection, opt walk) (admin.TriageResult, error) {
	return c.Triage(ctx, admin.TriageParams{
		Queue: queue, Action: action, IDs: sel.IDs, Filter: sel.Filter,
		DryRun: opt.DryRun, Cursor: opt.Cursor, Max: opt.Max,
	})
}

func requeueDead(ctx context.Context, c *workertest.Client, queue string, sel selection, opt walk) (admin.TriageResult, error) {
	return triage(ctx, c, admin.TriageRequeue, queue, sel, opt)
}

func purgeDead(ctx context.Context, c *workertest.Client, queue string, sel selection, opt walk) (admin.TriageResult, error) {
	return triage(ctx, c, admin.TriagePurge, queue, sel, opt)
}

func deadIDs(t *testing.T, c *workertest.Client) []string {
	t.Helper()
	jobs, _ := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: worker.StateDead})
	return workertest.JobIDs(jobs)
}

func TestTriageByIDs(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c, ids := triageSetup(t, rdb, prefix)
		ctx := t.Context()
		sel := selection{IDs: []string{"d-0003", "alive", "missing", "d-0001", "d-0003", "d-0005"}}
		dry, err := requeueDead(ctx, c, "q", sel, walk{DryRun: true})
		if err != nil || dry.Matched != 3 || dry.Changed != 0 || !slices.Equal(dry.Sample, []string{"d-0003", "d-0001", "d-0005"}) || dry.Next != "" {
			t.Fatalf("dry run = %+v, %v", dry, err)
		}
		if got := deadIDs(t, c); len(got) != 30 {
			t.Fatalf("the dry run changed the dead set: %d jobs", len(got))
		}
		// Max and resume: two, then the last.
		res, err := requeueDead(ctx, c, "q", sel, walk{Max: 2})
		if err != nil || res.Matched != 2 || res.Changed != 2 || res.Next == "" {
			t.Fatalf("RequeueDead(Max 2) = %+v, %v", res, err)
		}
		res, err = requeueDead(ctx, c, "q", sel, walk{Max: 2, Cursor: res.Next})
		if err != nil || res.Matched != 1 || res.Changed != 1 || !slices.Equal(res.Sample, []string{"d-0005"}) || res.Next != "" {
			t.Fatalf("RequeueDead(resumed) = %+v, %v", res, err)
		}
		for _, id := range []string{"d-0001", "d-0003", "d-0005", "alive"} {
			if !workertest.InState(t, c, "q", id, worker.StateReady) {
				t.Errorf("%s is not ready", id)
			}
		}
		// Purge by ids: a due job is never touched.
		res, err = c.Triage(ctx, admin.TriageParams{Queue: "q", Action: admin.TriagePurge, IDs: []string{"d-0000", "alive", "d-0001"}})
		if err != nil || res.Matched != 1 || res.Changed != 1 || res.Next != "" {
			t.Fatalf("PurgeDead = %+v, %v", res, err)
		}
		if !workertest.IsGone(t, c, "q", "d-0000") || workertest.IsGone(t, c, "q", "alive") {
			t.Error("purge by ids deleted the wrong jobs")
		}
		if got := deadIDs(t, c); len(got) != 26 || got[0] != ids[2] {
			t.Errorf("dead left: %v", got)
		}
	})
}

func TestTriageByFilter(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c, ids := triageSetup(t, rdb, prefix)
		ctx := t.Context()
		sel := selection{Filter: admin.DeadFilter{ErrorContains: "timeout"}}
		dry, err := purgeDead(ctx, c, "q", sel, walk{DryRun: true})
		if err != nil || dry.Matched != 15 || dry.Changed != 0 || !slices.Equal(dry.Sample, evens(ids)) || dry.Next != "" {
			t.Fatalf("dry run = %+v, %v", dry, err)
		}
		if got := deadIDs(t, c); len(got) != 30 {
			t.Fatalf("the dry run changed the dead set: %d jobs", len(got))
		}
		// Max 4 at a time, resumed until done: every match once.
		var sample []string
		opt := walk{Max: 4}
		for calls := 1; ; calls++ {
			res, err := requeueDead(ctx, c, "q", sel, opt)
			if err != nil || res.Matched != res.Changed || res.Matched > 4 {
				t.Fatalf("call %d: %+v, %v", calls, res, err)
			}
			sample = append(sample, res.Sample...)
			if res.Next == "" {
				break
			}
			if calls > 10 {
				t.Fatal("the walk does not end")
			}
			opt.Cursor = res.Next
		}
		if !slices.Equal(sample, evens(ids)) {
			t.Errorf("requeued %v, want %v", sample, evens(ids))
		}
		if s := workertest.Stats(t, c, "q"); s.Ready != 16 || s.Dead != 15 {
			t.Errorf("stats %+v, want 16 ready, 15 dead", s)
		}
		// By age: the jobs that died before the 11th, still dead.
		old := workertest.GetJob(t, c, "q", ids[11]).DiedAt
		res, err := c.Triage(ctx, admin.TriageParams{Queue: "q", Action: admin.TriagePurge, Filter: admin.DeadFilter{DiedBefore: old}})
		if err != nil || res.Matched != 5 || res.Changed != 5 {
			t.Fatalf("PurgeDead(before the 10th) = %+v, %v", res, err)
		}
		// Everything.
		res, err = c.Triage(ctx, admin.TriageParams{Queue: "q", Action: admin.TriagePurge})
		if err != nil || res.Matched != 10 || res.Changed != 10 || res.Next != "" {
			t.Fatalf("PurgeDead(all) = %+v, %v", res, err)
		}
		if s := workertest.Stats(t, c, "q"); s.Ready != 16 || s.Dead != 0 {
			t.Errorf("stats %+v, want 16 ready, none dead", s)
		}
	})
}

// TestTriageWalkBound: a resumed walk keeps the bound of its start, so jobs
// that died since are left alone.
func TestTriageWalkBound(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c, _ := triageSetup(t, rdb, prefix)
		ctx := t.Context()
		res, err := c.Triage(ctx, admin.TriageParams{Queue: "q", Action: admin.TriagePurge, Max: 20})
		if err != nil || res.Changed != 20 || res.Next == "" {
			t.Fatalf("PurgeDead(Max 20) = %+v, %v", res, err)
		}
		later := numbered("later", 3)
		now := testkit.RedisNow(t, rdb) + 5
		writeDead(t, rdb, prefix, "q", later, func(int) int64 { return now })
		res, err = c.Triage(ctx, admin.TriageParams{Queue: "q", Action: admin.TriagePurge, Cursor: res.Next})
		if err != nil || res.Changed != 10 || res.Next != "" {
			t.Fatalf("PurgeDead(resumed) = %+v, %v", res, err)
		}
		if got := deadIDs(t, c); !slices.Equal(got, later) {
			t.Errorf("dead left: %v, want the jobs that died after the walk started %v", got, later)
		}
	})
}

func TestTriageInvalid(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		c, _ := triageSetup(t, rdb, prefix)
		ctx := t.Context()
		idsNext, err := c.Triage(ctx, admin.TriageParams{Queue: "q", Action: admin.TriageRequeue, IDs: []string{"d-0000", "d-0001"}, Max: 1, DryRun: true})
		if err != nil || idsNext.Next == "" {
			t.Fatalf("RequeueDead = %+v, %v", idsNext, err)
		}
		walkNext, err := c.Triage(ctx, admin.TriageParams{Queue: "q", Action: admin.TriageRequeue, Max: 1, DryRun: true})
		if err != nil || walkNext.Next == "" {
			t.Fatalf("RequeueDead = %+v, %v", walkNext, err)
		}
		many := make([]string, 1001)
		for i := range many {
			many[i] = fmt.Sprintf("x%d", i)
		}
		tests := []struct {
			name  string
			sel   selection
			opt   walk
			field string
		}{
			{"1001 ids", selection{IDs: many}, walk{}, "IDs"},
			{"a bad id", selection{IDs: []string{"ok", "not ok"}}, walk{}, "IDs[1]"},
			{"ids and a filter", selection{IDs: []string{"ok"}, Filter: admin.DeadFilter{ErrorContains: "x"}}, walk{}, "Filter"},
			{"error filter too long", selection{Filter: admin.DeadFilter{ErrorContains: strings.Repeat("x", 257)}}, walk{}, "Filter.ErrorContains"},
			{"max -1", selection{}, walk{Max: -1}, "Max"},
			{"cursor garbage", selection{}, walk{Cursor: "!!"}, "Cursor"},
			{"ids cursor for a filter", selection{}, walk{Cursor: idsNext.Next}, "Cursor"},
			{"walk cursor for ids", selection{IDs: []string{"d-0000"}}, walk{Cursor: walkNext.Next}, "Cursor"},
			{"ids cursor past the ids", selection{IDs: []string{"d-0000"}}, walk{Cursor: encode("i:2")}, "Cursor"},
			{"list cursor", selection{}, walk{Cursor: encode("d:12:a")}, "Cursor"},
		}
		for _, tt := range tests {
			for name, f := range map[string]func() (admin.TriageResult, error){
				"requeue": func() (admin.TriageResult, error) { return requeueDead(ctx, c, "q", tt.sel, tt.opt) },
				"purge":   func() (admin.TriageResult, error) { return purgeDead(ctx, c, "q", tt.sel, tt.opt) },
			} {
				_, err := f()
				var ve *worker.ValidationError
				if !errors.As(err, &ve) || ve.Field != tt.field {
					t.Errorf("%s, %s: err = %v, want a *ValidationError on %s", name, tt.name, err, tt.field)
				}
			}
		}
		if s := workertest.Stats(t, c, "q"); s.Dead != 30 || s.Ready != 1 {
			t.Errorf("refused calls changed the queue: %+v", s)
		}
	})
}

func encode(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
