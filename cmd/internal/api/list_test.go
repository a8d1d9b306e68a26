package api

import (
	"bytes"
	"context"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// listAll pages through GET /v1/queues/{queue}/jobs with params, and
// returns the ids in order, failing on a page that is not what the
// library's Jobs of q (of queue) gives.
func (b *bundle) listAll(queue string, q admin.JobListParams, params url.Values) []string {
	q.Queue = queue
	b.t.Helper()
	var ids []string
	for pages := 0; ; pages++ {
		if q.Cursor != "" {
			params.Set("cursor", q.Cursor)
		}
		r := b.want(b.do("GET", "/v1/queues/"+queue+"/jobs?"+params.Encode(), adminSecret, ""), 200)
		var page wire.Page
		r.json(b.t, &page)
		direct, err := b.client.Jobs(b.t.Context(), q)
		if err != nil {
			b.t.Fatal(err)
		}
		// Active jobs' leases move between the two reads.
		if want := wire.PageOf(direct.Jobs, direct.Next); q.State != worker.StateActive && !reflect.DeepEqual(page, through(b.t, want)) {
			b.t.Errorf("page %s, the library's %+v", r.body, want)
		}
		for _, j := range page.Jobs {
			ids = append(ids, j.ID)
		}
		if page.NextCursor == nil {
			return ids
		}
		q.Cursor = *page.NextCursor
		if pages > 10 {
			b.t.Fatal("paging does not end")
		}
	}
}

// through is v as a client decodes it.
func through[T any](t *testing.T, v T) T {
	t.Helper()
	var buf bytes.Buffer
	if err := wire.Encode(&buf, v); err != nil {
		t.Fatal(err)
	}
	var back T
	reply{body: buf.Bytes()}.json(t, &back)
	return back
}

// TestListJobs: GET /v1/queues/{queue}/jobs lists each state in the
// library's order and pages, filters dead jobs, and gives what
// admin.Client.Jobs gives; so does the API client.
func TestListJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	b.enqueue(
		worker.JobSpec{Queue: "l", ID: "s2", Delay: 2 * time.Hour},
		worker.JobSpec{Queue: "l", ID: "s1", Delay: time.Hour},
		worker.JobSpec{Queue: "l", ID: "s3", Delay: 3 * time.Hour, Priority: worker.PriorityHigh},
		worker.JobSpec{Queue: "l", ID: "r-low", Priority: worker.PriorityLow},
		worker.JobSpec{Queue: "l", ID: "r-normal", Payload: []byte{0xff}},
		worker.JobSpec{Queue: "l", ID: "r-high", Priority: worker.PriorityHigh},
	)
	b.kill("d", "d1", "d2", "d3")
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b.run("busy", func(ctx context.Context, _ *worker.Job) error {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}, worker.QueueOptions{Concurrency: 2})
	b.enqueue(worker.JobSpec{Queue: "busy", ID: "a1"}, worker.JobSpec{Queue: "busy", ID: "a2"})
	testkit.Eventually(t, 10*time.Second, "both jobs active", func() bool {
		s, err := b.client.Stats(ctx, "busy")
		return err == nil && s.Active == 2
	})

	for _, tt := range []struct {
		queue string
		state worker.State
		limit int
		want  []string
	}{
		{"l", worker.StateScheduled, 2, []string{"s1", "s2", "s3"}},
		{"l", worker.StateReady, 1, []string{"r-high", "r-normal", "r-low"}},
		{"busy", worker.StateActive, 1, nil}, // by lease deadline: either order
		{"d", worker.StateDead, 2, []string{"d1", "d2", "d3"}},
	} {
		params := url.Values{"state": {string(tt.state)}, "limit": {strconv.Itoa(tt.limit)}}
		got := b.listAll(tt.queue, admin.JobListParams{State: tt.state, Limit: tt.limit}, params)
		if tt.want == nil {
			slices.Sort(got)
			tt.want = []string{"a1", "a2"}
		}
		if tt.state == worker.StateDead {
			slices.Sort(got) // died in the order the daemon ran them
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: listed %v, want %v", tt.state, got, tt.want)
		}
	}

	// An active job shows its worker and start.
	var page wire.Page
	b.want(b.do("GET", "/v1/queues/busy/jobs?state=active", adminSecret, ""), 200).json(t, &page)
	for _, j := range page.Jobs {
		if j.State != "active" || j.Worker == "" || j.StartedAt == nil || j.LeaseUntil == nil || j.Attempts != 1 {
			t.Errorf("active job %+v", j)
		}
	}

	// Dead jobs by error and by time of death.
	dead, err := b.client.Jobs(ctx, admin.JobListParams{Queue: "d", State: worker.StateDead})
	if err != nil || len(dead.Jobs) != 3 {
		t.Fatalf("dead: %+v %v", dead, err)
	}
	slices.SortFunc(dead.Jobs, func(x, y *worker.Job) int { return x.DiedAt.Compare(y.DiedAt) })
	first, last := dead.Jobs[0], dead.Jobs[2]
	for _, tt := range []struct {
		name   string
		filter admin.DeadFilter
		params url.Values
	}{
		{"error", admin.DeadFilter{ErrorContains: "BOOM D2"}, url.Values{"error": {"BOOM D2"}}},
		{"died_after", admin.DeadFilter{DiedAfter: first.DiedAt}, url.Values{"died_after": {first.DiedAt.Format(time.RFC3339Nano)}}},
		{"died_before", admin.DeadFilter{DiedBefore: last.DiedAt}, url.Values{"died_before": {last.DiedAt.Format(time.RFC3339Nano)}}},
		{"nothing matches", admin.DeadFilter{ErrorContains: "no such error"}, url.Values{"error": {"no such error"}}},
	} {
		tt.params.Set("state", "dead")
		q := admin.JobListParams{Queue: "d", State: worker.StateDead, Dead: tt.filter}
		got := b.listAll("d", q, tt.params)
		direct, err := b.client.Jobs(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(direct.Jobs) {
			t.Errorf("%s: listed %v, the library %d jobs", tt.name, got, len(direct.Jobs))
		}
		// The API client asks the same and gets the same.
		viaAPI, err := newClient(t, b, adminSecret).Jobs(ctx, q)
		if err != nil || !reflect.DeepEqual(viaAPI, direct) {
			t.Errorf("%s: the API client's Jobs %+v %v, the library's %+v", tt.name, viaAPI, err, direct)
		}
	}

	// A cursor of another state is refused, naming the parameter.
	page = wire.Page{}
	b.want(b.do("GET", "/v1/queues/l/jobs?state=scheduled&limit=1", adminSecret, ""), 200).json(t, &page)
	r := b.want(b.do("GET", "/v1/queues/l/jobs?state=ready&cursor="+url.QueryEscape(*page.NextCursor), adminSecret, ""), 400)
	if e := r.apiErr(t); e.Code != wire.CodeInvalidField || e.Field != "cursor" {
		t.Errorf("a scheduled cursor for ready jobs: %+v", e)
	}
}
