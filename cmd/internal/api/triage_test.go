package api

import (
	"context"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// triage sends a requeue or purge and decodes its reply.
func (b *bundle) triage(action, queue, body string) wire.Triage {
	b.t.Helper()
	var tr wire.Triage
	b.want(b.do("POST", "/v1/queues/"+queue+"/dead/"+action, adminSecret, body), 200).json(b.t, &tr)
	if tr.Action != action || tr.Sample == nil {
		b.t.Errorf("reply %+v to a %s", tr, action)
	}
	return tr
}

// deadIDs lists the dead jobs of queue, sorted.
func (b *bundle) deadIDs(queue string) []string {
	b.t.Helper()
	page, err := b.client.List(b.t.Context(), queue, worker.ListQuery{State: worker.StateDead, Limit: worker.ListLimitMax})
	if err != nil {
		b.t.Fatal(err)
	}
	var ids []string
	for _, j := range page.Jobs {
		ids = append(ids, j.ID)
	}
	slices.Sort(ids)
	return ids
}

// TestTriage: POST …/dead/requeue and …/dead/purge select dead jobs by
// ids, by filter or all of them, count them on a dry run without a
// change, and page a selection larger than the bound of a request.
func TestTriage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.h.triageMax = 2
	b.kill("t", "t1", "t2", "t3", "t4", "t5", "t6")

	// A dry run changes nothing.
	before := b.snapshot()
	tr := b.triage("purge", "t", `{"filter": {"error": "BOOM T3"}, "dry_run": true}`)
	if !tr.DryRun || tr.Matched != 1 || tr.Changed != 0 || !slices.Equal(tr.Sample, []string{"t3"}) || tr.NextCursor != nil {
		t.Errorf("dry run: %+v", tr)
	}
	if !maps.Equal(b.snapshot(), before) {
		t.Error("a dry run changed Redis")
	}

	// By ids: those not dead are skipped and not counted.
	tr = b.triage("requeue", "t", `{"ids": ["t1", "nope", "t1", "t2"]}`)
	if tr.Matched != 2 || tr.Changed != 2 || !slices.Equal(tr.Sample, []string{"t1", "t2"}) || tr.NextCursor != nil {
		t.Errorf("requeue by ids: %+v", tr)
	}
	for _, id := range []string{"t1", "t2"} {
		if j, err := b.client.Get(t.Context(), "t", id); err != nil || j.State != worker.StateReady {
			t.Errorf("requeued %s: %+v %v", id, j, err)
		}
	}

	// By filter, two per request here: the cursor continues the walk.
	var purged []string
	body := `{"filter": {"error": "boom"}}`
	for requests := 1; ; requests++ {
		tr = b.triage("purge", "t", body)
		if tr.Matched != tr.Changed || tr.Matched > 2 {
			t.Errorf("request %d: %+v", requests, tr)
		}
		purged = append(purged, tr.Sample...)
		if tr.NextCursor == nil {
			break
		}
		if requests > 5 {
			t.Fatal("the walk does not end")
		}
		body = `{"filter": {"error": "boom"}, "cursor": "` + *tr.NextCursor + `"}`
	}
	if slices.Sort(purged); !slices.Equal(purged, []string{"t3", "t4", "t5", "t6"}) {
		t.Errorf("purged %v", purged)
	}
	if ids := b.deadIDs("t"); len(ids) != 0 {
		t.Errorf("still dead: %v", ids)
	}
	// A purge never deletes a job that is not dead.
	if _, err := b.client.Get(t.Context(), "t", "t1"); err != nil {
		t.Errorf("t1, requeued, was purged: %v", err)
	}

	// No body: every dead job, within the bound.
	b.kill("u", "u1", "u2", "u3")
	tr = b.triage("requeue", "u", "")
	if tr.Matched != 2 || tr.Changed != 2 || tr.NextCursor == nil {
		t.Errorf("requeue all, first request: %+v", tr)
	}
	tr = b.triage("requeue", "u", `{"cursor": "`+*tr.NextCursor+`"}`)
	if tr.Matched != 1 || tr.NextCursor != nil {
		t.Errorf("requeue all, second request: %+v", tr)
	}
}

// triageRecorder is a backend that records the options of its requeues
// and purges.
type triageRecorder struct {
	*worker.Client
	mu   sync.Mutex
	seen []worker.TriageOptions
	err  error // returned with the library's result, when set
}

func (r *triageRecorder) RequeueDead(ctx context.Context, queue string, sel worker.DeadSelection, opt worker.TriageOptions) (worker.TriageResult, error) {
	r.mu.Lock()
	r.seen = append(r.seen, opt)
	r.mu.Unlock()
	res, err := r.Client.RequeueDead(ctx, queue, sel, opt)
	if r.err != nil {
		res.Next, err = "resume-here", r.err
	}
	return res, err
}

// TestTriageBound: a request matches at most TriageMax jobs, or its max
// when smaller; a walk that fails after some work answers what it did
// with the cursor that resumes it.
func TestTriageBound(t *testing.T) {
	t.Parallel()
	rec := &triageRecorder{}
	b := setup(t, func(o *Options) {
		rec.Client = o.Backend().(*worker.Client)
		o.Backend = func() Backend { return rec }
	})
	b.kill("q", "a", "b")
	b.triage("requeue", "q", "")
	b.triage("requeue", "q", `{"max": 5}`)
	b.triage("requeue", "q", `{"max": 1000000, "dry_run": true}`)
	if want := []int{TriageMax, 5, TriageMax}; len(rec.seen) != 3 ||
		rec.seen[0].Max != want[0] || rec.seen[1].Max != want[1] || rec.seen[2].Max != want[2] || !rec.seen[2].DryRun {
		t.Errorf("options %+v, want Max %v", rec.seen, want)
	}

	b.kill("q", "c")
	rec.err = errors.New("redis went away mid-walk")
	tr := b.triage("requeue", "q", `{"ids": ["c"]}`)
	if tr.Matched != 1 || tr.NextCursor == nil || *tr.NextCursor != "resume-here" {
		t.Errorf("a walk that failed after some work: %+v", tr)
	}
	if !strings.Contains(b.logs.String(), "redis went away mid-walk") {
		t.Errorf("the error was not logged:\n%s", b.logs.String())
	}
	// Failing before any work, it is the error.
	r := b.want(b.do("POST", "/v1/queues/q/dead/requeue", adminSecret, `{"ids": ["nope"]}`), 500)
	if e := r.apiErr(t); e.Code != wire.CodeInternal {
		t.Errorf("error %+v", e)
	}
}

// TestClientTriage: the API client's RequeueDead and PurgeDead give what
// worker.Client's give, across as many requests as the server's bound
// needs, and stop at their own Max with the cursor that continues.
func TestClientTriage(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.h.triageMax = 2
	c := newClient(t, b, adminSecret)
	ctx := t.Context()
	ids := []string{"k1", "k2", "k3", "k4", "k5"}
	b.kill("api", ids...)
	b.kill("lib", ids...)

	for _, tt := range []struct {
		name string
		sel  worker.DeadSelection
		opt  worker.TriageOptions
	}{
		{"dry run of all", worker.DeadSelection{}, worker.TriageOptions{DryRun: true}},
		{"dry run by filter", worker.DeadSelection{Filter: worker.DeadFilter{ErrorContains: "k4"}}, worker.TriageOptions{DryRun: true}},
		{"dry run by ids", worker.DeadSelection{IDs: []string{"k5", "k1", "gone"}}, worker.TriageOptions{DryRun: true}},
	} {
		viaAPI, err := c.PurgeDead(ctx, "api", tt.sel, tt.opt)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := b.client.PurgeDead(ctx, "lib", tt.sel, tt.opt)
		if err != nil {
			t.Fatal(err)
		}
		// The two queues' jobs died in their own orders.
		slices.Sort(viaAPI.Sample)
		slices.Sort(direct.Sample)
		if !reflect.DeepEqual(viaAPI, direct) {
			t.Errorf("%s: through the API %+v, directly %+v", tt.name, viaAPI, direct)
		}
	}

	// Its own Max: three of five, then the rest from the cursor.
	res, err := c.RequeueDead(ctx, "api", worker.DeadSelection{}, worker.TriageOptions{Max: 3})
	if err != nil || res.Matched != 3 || res.Changed != 3 || res.Next == "" {
		t.Fatalf("requeue three: %+v %v", res, err)
	}
	res, err = c.RequeueDead(ctx, "api", worker.DeadSelection{}, worker.TriageOptions{Cursor: res.Next})
	if err != nil || res.Matched != 2 || res.Next != "" {
		t.Errorf("requeue the rest: %+v %v", res, err)
	}
	if left := b.deadIDs("api"); len(left) != 0 {
		t.Errorf("still dead: %v", left)
	}

	// PurgeAll and RequeueAll: every dead job, however many requests.
	n, err := c.PurgeAll(ctx, "lib")
	if err != nil || n != 5 {
		t.Errorf("PurgeAll: %d %v", n, err)
	}
	b.kill("again", ids...)
	if n, err := c.RequeueAll(ctx, "again"); err != nil || n != 5 {
		t.Errorf("RequeueAll: %d %v", n, err)
	}

	// Bad arguments are the library's errors.
	_, err = c.PurgeDead(ctx, "api", worker.DeadSelection{IDs: []string{"a b"}}, worker.TriageOptions{})
	if !errors.Is(err, worker.ErrInvalid) {
		t.Errorf("a bad id: %v", err)
	}
	_, err = c.PurgeDead(ctx, "api", worker.DeadSelection{}, worker.TriageOptions{Max: -1})
	var ve *worker.ValidationError
	if !errors.As(err, &ve) || ve.Field != "Max" {
		t.Errorf("a negative Max: %v", err)
	}
	_, err = c.PurgeDead(ctx, "api", worker.DeadSelection{Filter: worker.DeadFilter{ErrorContains: strings.Repeat("e", 300)}}, worker.TriageOptions{})
	if !errors.As(err, &ve) || ve.Field != "Filter.ErrorContains" {
		t.Errorf("a long error filter: %v", err)
	}
}
