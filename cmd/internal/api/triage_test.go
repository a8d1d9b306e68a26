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
	"github.com/seed-53d105c9/courier/worker/admin"
)

// triage sends a requeue or purge and decodes its reply.
func (b *bundle) triage(action, queue, body string) wire.Triage {
	b.t.Helper()
	var tr wire.Triage
	b.want(b.do("POST", "/v1/queues/"+queue+"/dead/"+action, adminSecret, body), 200).json(b.t, &tr)
	if string(tr.Action) != action || tr.Sample == nil {
		b.t.Errorf("reply %+v to a %s", tr, action)
	}
	return tr
}

// deadIDs lists the dead jobs of queue, sorted.
func (b *bundle) deadIDs(queue string) []string {
	b.t.Helper()
	page, err := b.client.Jobs(b.t.Context(), admin.JobListParams{Queue: queue, State: worker.StateDead, Limit: admin.ListLimitMax})
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

// triageRecorder is a backend that records the parameters of its
// triages.
type triageRecorder struct {
	*admin.Client
	mu   sync.Mutex
	seen []admin.TriageParams
	err  error // returned with the library's result, when set
}

func (r *triageRecorder) Triage(ctx context.Context, p admin.TriageParams) (admin.TriageResult, error) {
	r.mu.Lock()
	r.seen = append(r.seen, p)
	r.mu.Unlock()
	res, err := r.Client.Triage(ctx, p)
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
		rec.Client = o.Backend().(*admin.Client)
		o.Backend = func() admin.Operator { return rec }
	})
	b.kill("q", "a", "b")
	b.triage("requeue", "q", "")
	b.triage("requeue", "q", `{"max": 5}`)
	b.triage("requeue", "q", `{"max": 1000000, "dry_run": true}`)
	if want := []int{TriageMax, 5, TriageMax}; len(rec.seen) != 3 ||
		rec.seen[0].Max != want[0] || rec.seen[1].Max != want[1] || rec.seen[2].Max != want[2] || !rec.seen[2].DryRun {
		t.Errorf("parameters %+v, want Max %v", rec.seen, want)
	}
	for _, p := range rec.seen {
		if p.Queue != "q" || p.Action != admin.TriageRequeue {
			t.Errorf("parameters %+v: the route's queue and action", p)
		}
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

// TestClientTriage: the API client's Triage gives what admin.Client's
// gives, across as many requests as the server's bound needs, and stops
// at its own Max with the cursor that continues.
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
		p    admin.TriageParams
	}{
		{"dry run of all", admin.TriageParams{DryRun: true}},
		{"dry run by filter", admin.TriageParams{Filter: admin.DeadFilter{ErrorContains: "k4"}, DryRun: true}},
		{"dry run by ids", admin.TriageParams{IDs: []string{"k5", "k1", "gone"}, DryRun: true}},
	} {
		tt.p.Action, tt.p.Queue = admin.TriagePurge, "api"
		viaAPI, err := c.Triage(ctx, tt.p)
		if err != nil {
			t.Fatal(err)
		}
		tt.p.Queue = "lib"
		direct, err := b.client.Triage(ctx, tt.p)
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
	requeue := admin.TriageParams{Queue: "api", Action: admin.TriageRequeue, Max: 3}
	res, err := c.Triage(ctx, requeue)
	if err != nil || res.Matched != 3 || res.Changed != 3 || res.Next == "" {
		t.Fatalf("requeue three: %+v %v", res, err)
	}
	requeue.Max, requeue.Cursor = 0, res.Next
	res, err = c.Triage(ctx, requeue)
	if err != nil || res.Matched != 2 || res.Next != "" {
		t.Errorf("requeue the rest: %+v %v", res, err)
	}
	if left := b.deadIDs("api"); len(left) != 0 {
		t.Errorf("still dead: %v", left)
	}

	// Every dead job, however many requests.
	res, err = c.Triage(ctx, admin.TriageParams{Queue: "lib", Action: admin.TriagePurge})
	if err != nil || res.Changed != 5 {
		t.Errorf("purge every dead job: %+v %v", res, err)
	}
	b.kill("again", ids...)
	if res, err := c.Triage(ctx, admin.TriageParams{Queue: "again", Action: admin.TriageRequeue}); err != nil || res.Changed != 5 {
		t.Errorf("requeue every dead job: %+v %v", res, err)
	}

	// Bad arguments are the library's errors.
	_, err = c.Triage(ctx, admin.TriageParams{Queue: "api", Action: admin.TriagePurge, IDs: []string{"a b"}})
	if !errors.Is(err, worker.ErrInvalid) {
		t.Errorf("a bad id: %v", err)
	}
	_, err = c.Triage(ctx, admin.TriageParams{Queue: "api", Action: admin.TriagePurge, Max: -1})
	var ve *worker.ValidationError
	if !errors.As(err, &ve) || ve.Field != "Max" {
		t.Errorf("a negative Max: %v", err)
	}
	_, err = c.Triage(ctx, admin.TriageParams{Queue: "api", Action: admin.TriagePurge, Filter: admin.DeadFilter{ErrorContains: strings.Repeat("e", 300)}})
	if !errors.As(err, &ve) || ve.Field != "Filter.ErrorContains" {
		t.Errorf("a long error filter: %v", err)
	}
}
