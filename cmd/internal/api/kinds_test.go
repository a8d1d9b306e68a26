package api

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestEnqueueKind: a job's kind, sent as "kind" with a single enqueue or
// in a batch, is stored as worker.JobSpec.Kind and shown as "kind" by GET
// and the listing, apart from the job's headers; a job without one shows
// no "kind". The API's Go client sends and reads it as admin.Client does.
// On single Redis and on Cluster, where a partitioned queue spreads the
// batch over its partitions.
func TestEnqueueKind(t *testing.T) {
	t.Parallel()
	for name, rdb := range map[string]func(testing.TB) rueidis.Client{"single": testkit.Single, "cluster": testkit.Cluster} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setupOn(t, rdb(t))
			ctx := t.Context()
			b.serve("kq", func(_ context.Context, _ *worker.Job) error { return nil }, worker.QueueOptions{Partitions: 3}, worker.Config{})
			b.want(b.do("POST", "/v1/queues/kq/jobs", producerSecret,
				`{"id": "k1", "kind": "email.send", "delay": "1h", "headers": {"tenant": "acme"}}`), http.StatusCreated)
			b.want(b.do("POST", "/v1/queues/kq/jobs/batch", producerSecret,
				`{"jobs": [{"id": "k2", "kind": "report:build", "delay": "1h"}, {"id": "k3", "delay": "1h"}, {"id": "k4", "kind": "a/b_c-D9", "delay": "1h"}]}`), http.StatusOK)
			c := newClient(t, b, producerSecret)
			if _, err := enqueueOne(ctx, c, worker.JobSpec{Queue: "kq", ID: "k5", Kind: "email.send", Delay: time.Hour}); err != nil {
				t.Fatal(err)
			}

			want := map[string]string{"k1": "email.send", "k2": "report:build", "k3": "", "k4": "a/b_c-D9", "k5": "email.send"}
			for id, kind := range want {
				direct, err := b.client.Get(ctx, "kq", id)
				if err != nil {
					t.Fatal(err)
				}
				if direct.Kind != kind {
					t.Errorf("%s: stored kind %q, want %q", id, direct.Kind, kind)
				}
				r := b.want(b.do("GET", "/v1/queues/kq/jobs/"+id, producerSecret, ""), http.StatusOK)
				var v wire.Job
				r.json(t, &v)
				if v.Kind != kind || strings.Contains(string(r.body), "courier.kind") {
					t.Errorf("%s: GET shows kind %q (want %q): %s", id, v.Kind, kind, r.body)
				}
				if has := strings.Contains(string(r.body), `"kind"`); has != (kind != "") {
					t.Errorf("%s: GET %s: kind present %v", id, r.body, has)
				}
				viaAPI, err := c.Get(ctx, "kq", id)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(viaAPI, direct) {
					t.Errorf("%s: Get through the API\n%+v\ndirectly\n%+v", id, viaAPI, direct)
				}
			}
			if j, _ := b.client.Get(ctx, "kq", "k1"); !reflect.DeepEqual(j.Headers, map[string]string{"tenant": "acme"}) {
				t.Errorf("k1: headers %q, want only tenant", j.Headers)
			}

			var page wire.Page
			b.want(b.do("GET", "/v1/queues/kq/jobs?state=scheduled", adminSecret, ""), http.StatusOK).json(t, &page)
			listed := map[string]string{}
			for _, j := range page.Jobs {
				listed[j.ID] = j.Kind
			}
			if !reflect.DeepEqual(listed, want) {
				t.Errorf("listing shows kinds %q, want %q", listed, want)
			}
		})
	}
}

// TestEnqueueKindRefused: a bad kind is refused by the library's rules and
// named as the request wrote it, in a single enqueue and in a batch; the
// header a kind travels in is not a header a request may send.
func TestEnqueueKindRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, tc := range []struct {
		path, body, field string
	}{
		{"/v1/queues/q/jobs", `{"kind": "email send"}`, "kind"},
		{"/v1/queues/q/jobs", `{"kind": ""}`, "kind"},
		{"/v1/queues/q/jobs", `{"kind": 7}`, "kind"},
		{"/v1/queues/q/jobs", `{"kind": "` + strings.Repeat("k", worker.MaxKindLen+1) + `"}`, "kind"},
		{"/v1/queues/q/jobs", `{"headers": {"courier.kind": "email.send"}}`, `headers["courier.kind"]`},
		{"/v1/queues/q/jobs/batch", `{"jobs": [{"kind": "ok"}, {"kind": "n\u00e9"}]}`, "jobs[1].kind"},
		{"/v1/queues/q/jobs/batch", `{"jobs": [{"kind": "a|b"}]}`, "jobs[0].kind"},
	} {
		e := b.want(b.do("POST", tc.path, producerSecret, tc.body), http.StatusBadRequest).apiErr(t)
		if e.Field != tc.field {
			t.Errorf("%s %s: field %q (%s), want %q", tc.path, tc.body, e.Field, e.Message, tc.field)
		}
	}
	if s, err := b.client.Stats(t.Context(), "q"); err != nil || s.Scheduled+s.Ready != 0 {
		t.Errorf("queue q holds %+v (%v); every enqueue was to be refused", s, err)
	}
}

// warner is a backend that warns on every job of queue and on no other,
// as admin.Client warns on a queue no daemon has served.
type warner struct {
	admin.Operator
	queue string
}

func (w warner) Enqueue(ctx context.Context, specs []worker.JobSpec) ([]worker.EnqueueResult, error) {
	res, err := w.Operator.Enqueue(ctx, specs)
	for i := range res {
		res[i].Warning = ""
		if specs[i].Queue == w.queue {
			res[i].Warning = fmt.Sprintf("no daemon has ever served queue %q", w.queue)
		}
	}
	return res, err
}

// TestEnqueueWarning: the backend's warning on an enqueue
// (worker.EnqueueResult.Warning) is the reply's "warning", per job of a
// batch, and absent when there is none; the API's Go client reads it back
// into its results.
func TestEnqueueWarning(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		backend := o.Backend
		o.Backend = func() admin.Operator { return warner{backend(), "reprots"} }
	})
	const warning = `no daemon has ever served queue \"reprots\"`
	r := b.want(b.do("POST", "/v1/queues/reprots/jobs", producerSecret, `{"delay": "1h"}`), http.StatusCreated)
	if !strings.Contains(string(r.body), `"warning":"`+warning+`"`) {
		t.Errorf("enqueue to an unserved queue: %s", r.body)
	}
	r = b.want(b.do("POST", "/v1/queues/reports/jobs", producerSecret, `{"delay": "1h"}`), http.StatusCreated)
	if strings.Contains(string(r.body), "warning") {
		t.Errorf("enqueue to a served queue: %s", r.body)
	}
	r = b.want(b.do("POST", "/v1/queues/reprots/jobs/batch", producerSecret, `{"jobs": [{"delay": "1h"}, {"delay": "1h"}]}`), http.StatusOK)
	var batch batchReply
	r.json(t, &batch)
	for i, item := range batch.Jobs {
		if item.Warning != strings.ReplaceAll(warning, `\"`, `"`) {
			t.Errorf("batch item %d: warning %q", i, item.Warning)
		}
	}

	c := newClient(t, b, producerSecret)
	res, err := c.Enqueue(t.Context(), []worker.JobSpec{{Queue: "reprots", Delay: time.Hour}})
	if err != nil || res[0].Warning == "" {
		t.Errorf("one job through the client: %+v, %v; want a warning", res, err)
	}
	res, err = c.Enqueue(t.Context(), []worker.JobSpec{{Queue: "reprots", Delay: time.Hour}, {Queue: "reports", Delay: time.Hour}})
	if err != nil || len(res) != 2 || res[0].Warning == "" || res[1].Warning != "" {
		t.Errorf("a batch through the client: %+v, %v; want a warning on the first job only", res, err)
	}
}

// TestEnqueueWarnsUnserved: on the real backend, an enqueue to a queue,
// or of a kind, no daemon has ever served warns, naming it, and one to a
// queue or kind a daemon serves does not; the job is stored either way.
func TestEnqueueWarnsUnserved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.run("reports", func(context.Context, *worker.Job) error { return nil }, worker.QueueOptions{})
	testkit.Eventually(t, 10*time.Second, "the daemon to report", func() bool {
		f, err := b.client.Fleet(t.Context(), "reports")
		return err == nil && len(f.Processes) == 1
	})
	var out enqueued
	b.want(b.do("POST", "/v1/queues/reprots/jobs", producerSecret, `{"delay": "1h"}`), http.StatusCreated).json(t, &out)
	if !strings.Contains(out.Warning, `"reprots"`) {
		t.Errorf("enqueue to a queue never served: warning %q, want one naming it", out.Warning)
	}
	r := b.want(b.do("POST", "/v1/queues/reports/jobs", producerSecret, `{"delay": "1h"}`), http.StatusCreated)
	if strings.Contains(string(r.body), "warning") {
		t.Errorf("enqueue to a served queue: %s", r.body)
	}

	// By kind: the batch's job of a kind never served warns, naming it.
	nop := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
	b.serveHandler("mailq", worker.Kinds{"email.send": nop}, worker.QueueOptions{}, worker.Config{})
	testkit.Eventually(t, 10*time.Second, "the daemon of mailq to report", func() bool {
		f, err := b.client.Fleet(t.Context(), "mailq")
		return err == nil && len(f.Processes) == 1
	})
	var batch batchReply
	b.want(b.do("POST", "/v1/queues/mailq/jobs/batch", producerSecret,
		`{"jobs": [{"kind": "email.send", "delay": "1h"}, {"kind": "emial.send", "delay": "1h"}, {"delay": "1h"}]}`), http.StatusOK).json(t, &batch)
	for i, want := range []string{"", `kind "emial.send" of queue "mailq"`, `jobs without a kind of queue "mailq"`} {
		if got := batch.Jobs[i].Warning; (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("batch item %d: warning %q, want %q", i, got, want)
		}
	}
	if s, err := b.client.Stats(t.Context(), "reprots"); err != nil || s.Scheduled != 1 {
		t.Errorf("queue reprots: %+v, %v; the warned job is stored all the same", s, err)
	}
}
