package api

import (
	"context"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// getJob reads a job through GET.
func (b *bundle) getJob(queue, id string) (wire.Job, reply) {
	b.t.Helper()
	r := b.want(b.do("GET", "/v1/queues/"+queue+"/jobs/"+id, producerSecret, ""), http.StatusOK)
	var v wire.Job
	r.json(b.t, &v)
	return v, r
}

// TestJobProgress: an active job shows what its handler last reported,
// once the next lease renewal stored it, in GET, in the list of active
// jobs and through the API's Go client.
func TestJobProgress(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	b.serve("p", func(ctx context.Context, j *worker.Job) error {
		if err := j.ReportProgress(42.5, "step 2 of 4 <b>"); err != nil {
			return err
		}
		select {
		case <-release:
		case <-ctx.Done():
		}
		return nil
	}, worker.QueueOptions{}, worker.Config{Lease: 300 * time.Millisecond}) // renewed every 100ms
	b.enqueue(worker.JobSpec{Queue: "p", ID: "busy", Headers: map[string]string{"tenant": "acme"}})

	var v wire.Job
	testkit.Eventually(t, 10*time.Second, "the job's progress shown", func() bool {
		v, _ = b.getJob("p", "busy")
		return v.Progress != nil
	})
	if v.State != "active" || v.Progress.Percent != 42.5 || v.Progress.Message != "step 2 of 4 <b>" || v.Progress.UpdatedAt.IsZero() ||
		v.Headers["tenant"] != "acme" {
		t.Errorf("active job %+v, progress %+v", v, v.Progress)
	}

	var page wire.Page
	b.want(b.do("GET", "/v1/queues/p/jobs?state=active", adminSecret, ""), http.StatusOK).json(t, &page)
	if len(page.Jobs) != 1 || page.Jobs[0].Progress == nil || page.Jobs[0].Progress.Percent != 42.5 {
		t.Errorf("active jobs %+v", page.Jobs)
	}

	viaAPI, err := newClient(t, b, producerSecret).Get(ctx, "p", "busy")
	if err != nil {
		t.Fatal(err)
	}
	if p := viaAPI.Progress; p == nil || p.Percent != 42.5 || p.Message != "step 2 of 4 <b>" || p.UpdatedAt.IsZero() {
		t.Errorf("the API client's progress %+v", p)
	}
}

// TestCompletedJobs: a queue that retains its finished jobs shows them
// as completed, with their results (compact JSON as is, other bytes in
// base64, none left out), finish times and headers, in GET, in the list
// of completed jobs, in its counts and through the API's Go client.
func TestCompletedJobs(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	results := map[string][]byte{"json": []byte(`{"ok":true,"n":[1,2]}`), "bin": {0, 1, 2}, "none": nil}
	b.serve("done", func(_ context.Context, j *worker.Job) error {
		if r := results[j.ID]; r != nil {
			return j.SetResult(r)
		}
		return nil
	}, worker.QueueOptions{RetainCompleted: worker.Retention{Count: 10}}, worker.Config{})
	for id := range results {
		b.enqueue(worker.JobSpec{Queue: "done", ID: id, Headers: map[string]string{"tenant": "acme"}})
	}
	testkit.Eventually(t, 10*time.Second, "every job completed", func() bool {
		s, err := b.client.Stats(ctx, "done")
		return err == nil && s.Completed == 3
	})

	c := newClient(t, b, adminSecret)
	for id, result := range results {
		v, r := b.getJob("done", id)
		if v.State != "completed" || v.FinishedAt == nil || v.Headers["tenant"] != "acme" {
			t.Errorf("%s: %s", id, r.body)
		}
		switch id {
		case "json":
			if string(v.Result) != string(result) || v.ResultBase64 != nil {
				t.Errorf("%s: %s", id, r.body)
			}
		case "bin":
			if v.Result != nil || v.ResultBase64 == nil || *v.ResultBase64 != "AAEC" {
				t.Errorf("%s: %s", id, r.body)
			}
		case "none":
			if v.Result != nil || v.ResultBase64 != nil {
				t.Errorf("%s: %s", id, r.body)
			}
		}
		direct, err := b.client.Get(ctx, "done", id)
		if err != nil {
			t.Fatal(err)
		}
		viaAPI, err := c.Get(ctx, "done", id)
		if err != nil || !reflect.DeepEqual(viaAPI, direct) {
			t.Errorf("%s: Get through the API\n%+v (%v)\ndirectly\n%+v", id, viaAPI, err, direct)
		}
	}

	got := b.listAll("done", admin.JobListParams{State: worker.StateCompleted, Limit: 2}, url.Values{"state": {"completed"}, "limit": {"2"}})
	slices.Sort(got)
	if want := []string{"bin", "json", "none"}; !slices.Equal(got, want) {
		t.Errorf("completed jobs %v, want %v", got, want)
	}
	direct, err := b.client.Jobs(ctx, admin.JobListParams{Queue: "done", State: worker.StateCompleted})
	if err != nil {
		t.Fatal(err)
	}
	if viaAPI, err := c.Jobs(ctx, admin.JobListParams{Queue: "done", State: worker.StateCompleted}); err != nil || !reflect.DeepEqual(viaAPI, direct) {
		t.Errorf("the API client's List %+v %v, the library's %+v", viaAPI, err, direct)
	}

	var q wire.Queue
	b.want(b.do("GET", "/v1/queues/done", adminSecret, ""), http.StatusOK).json(t, &q)
	if q.Jobs.Completed != 3 {
		t.Errorf("queue counts %+v", q.Jobs)
	}
	if s, err := c.Stats(ctx, "done"); err != nil || s.Completed != 3 {
		t.Errorf("the API client's Stats %+v %v", s, err)
	}
}
