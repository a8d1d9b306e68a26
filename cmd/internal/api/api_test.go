package api

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

func TestEnqueueAndGet(t *testing.T) {
	t.Parallel()
	b := setup(t)
	before := time.Now()
	r := b.want(b.do("POST", "/v1/queues/emails/jobs", producerSecret,
		`{"id": "welcome-42", "payload": {"to": "ada@example.com", "html": "<b>hi</b>"}, "delay": "90s", "max_attempts": 5, "timeout": "2m"}`), 201)
	var got enqueued
	r.json(t, &got)
	if got.ID != "welcome-42" || got.RunAt.Before(before.Add(90*time.Second).Truncate(time.Millisecond)) || got.RunAt.After(time.Now().Add(90*time.Second)) {
		t.Errorf("reply %+v, want id welcome-42 due in 90s", got)
	}
	if loc := r.header.Get("Location"); loc != "/v1/queues/emails/jobs/welcome-42" {
		t.Errorf("Location %q", loc)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}

	job, err := b.client.Get(t.Context(), "emails", "welcome-42")
	if err != nil {
		t.Fatal(err)
	}
	if string(job.Payload) != `{"to":"ada@example.com","html":"<b>hi</b>"}` || job.MaxAttempts != 5 || job.Timeout != 2*time.Minute ||
		job.State != worker.StateScheduled {
		t.Errorf("stored job %+v (payload %s)", job, job.Payload)
	}
	// The stored run-at is on the Redis clock; the reply's on the API's.
	if d := job.RunAt.Sub(got.RunAt); d < -time.Second || d > time.Second {
		t.Errorf("stored run-at %s, replied %s", job.RunAt, got.RunAt)
	}

	r = b.want(b.do("GET", "/v1/queues/emails/jobs/welcome-42", producerSecret, ""), 200)
	var v wire.Job
	r.json(t, &v)
	if v.ID != "welcome-42" || v.Queue != "emails" || v.State != "scheduled" || v.Attempts != 0 || v.MaxAttempts != 5 ||
		v.Timeout != "2m0s" || string(v.Payload) != `{"to":"ada@example.com","html":"<b>hi</b>"}` || v.PayloadBase64 != nil ||
		v.RunAt == nil || !v.RunAt.Equal(job.RunAt) || v.EnqueuedAt == nil || v.LeaseUntil != nil || v.DiedAt != nil {
		t.Errorf("GET: %s", r.body)
	}
	if !strings.Contains(string(r.body), `"html":"<b>hi</b>"`) {
		t.Errorf("the payload did not come back as it went in: %s", r.body)
	}
}

func TestEnqueueForms(t *testing.T) { //nolint:tparallel // the cases share the parent's bundle and run one after another
	t.Parallel()
	b := setup(t)
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Millisecond)
	tests := []struct {
		name, body string
		payload    string
		state      worker.State
		runAt      time.Time
	}{
		{"no payload", `{}`, "", worker.StateReady, time.Time{}},
		{"null payload", `{"payload": null, "delay": null}`, "", worker.StateReady, time.Time{}},
		{"string payload", `{"payload": "hello"}`, `"hello"`, worker.StateReady, time.Time{}},
		{"pretty payload is compacted", "{\"payload\": [1, 2,\n 3]}", `[1,2,3]`, worker.StateReady, time.Time{}},
		{"base64 payload", `{"payload_base64": "` + base64.StdEncoding.EncodeToString([]byte{0, 1, 0xff, 'x'}) + `"}`, "\x00\x01\xffx", worker.StateReady, time.Time{}},
		{"run_at", `{"run_at": "` + at.Format(time.RFC3339Nano) + `"}`, "", worker.StateScheduled, at},
		{"run_at in the past", `{"run_at": "2020-01-01T00:00:00Z"}`, "", worker.StateReady, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.want(b.do("POST", "/v1/queues/forms/jobs", producerSecret, tt.body), 201)
			var got enqueued
			r.json(t, &got)
			job, err := b.client.Get(t.Context(), "forms", got.ID)
			if err != nil {
				t.Fatal(err)
			}
			if string(job.Payload) != tt.payload || job.State != tt.state {
				t.Errorf("payload %q state %s, want %q %s", job.Payload, job.State, tt.payload, tt.state)
			}
			if !tt.runAt.IsZero() && (!job.RunAt.Equal(tt.runAt) || !got.RunAt.Equal(tt.runAt)) {
				t.Errorf("run-at stored %s replied %s, want %s", job.RunAt, got.RunAt, tt.runAt)
			}
			// GET gives the payload back byte for byte.
			r = b.want(b.do("GET", "/v1/queues/forms/jobs/"+got.ID, producerSecret, ""), 200)
			var v wire.Job
			r.json(t, &v)
			back, err := v.ToWorker()
			if err != nil || string(back.Payload) != tt.payload {
				t.Errorf("GET payload %q (%v), want %q: %s", back.Payload, err, tt.payload, r.body)
			}
		})
	}
}

func TestEnqueueDuplicate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "order-1", "payload": 1}`), 201)
	r := b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "order-1", "payload": 2}`), 409)
	if e := r.apiErr(t); e.Code != wire.CodeConflict || e.Field != "id" {
		t.Errorf("error %+v", e)
	}
	job, err := b.client.Get(t.Context(), "q", "order-1")
	if err != nil || string(job.Payload) != "1" {
		t.Errorf("the first job changed: %+v %v", job, err)
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.enqueue(worker.JobSpec{Queue: "bulk", ID: "taken"})
	var body strings.Builder
	body.WriteString(`{"jobs": [`)
	for i := range 1000 {
		if i > 0 {
			body.WriteString(",")
		}
		switch i {
		case 7:
			body.WriteString(`{"id": "taken"}`)
		case 8, 9:
			body.WriteString(`{"id": "twice", "delay": "1h"}`)
		default:
			fmt.Fprintf(&body, `{"payload": {"n": %d}}`, i)
		}
	}
	body.WriteString(`]}`)
	// Warm up: the first call records the queue and may load the script.
	b.want(b.do("POST", "/v1/queues/bulk/jobs/batch", producerSecret, `{"jobs": [{}]}`), 200)

	calls := b.calls.n.Load()
	r := b.want(b.do("POST", "/v1/queues/bulk/jobs/batch", producerSecret, body.String()), 200)
	if n := b.calls.n.Load() - calls; n != 1 {
		t.Errorf("the batch took %d Redis round trips, want 1", n)
	}
	var got batchReply
	r.json(t, &got)
	if len(got.Jobs) != 1000 || got.Created != 998 || got.Conflicts != 2 {
		t.Fatalf("%d results, %d created, %d conflicts", len(got.Jobs), got.Created, got.Conflicts)
	}
	for i, item := range got.Jobs {
		switch i {
		case 7, 9:
			if item.Status != "conflict" || item.Error == nil || item.Error.Code != wire.CodeConflict ||
				item.Error.Field != fmt.Sprintf("jobs[%d].id", i) || item.RunAt != nil {
				t.Errorf("job %d: %+v", i, item)
			}
		default:
			if item.Status != "created" || item.Error != nil || item.RunAt == nil || item.ID == "" {
				t.Errorf("job %d: %+v", i, item)
			}
		}
	}
	if got.Jobs[8].ID != "twice" || got.Jobs[7].ID != "taken" {
		t.Errorf("ids %q %q", got.Jobs[7].ID, got.Jobs[8].ID)
	}
	s, err := b.client.Stats(t.Context(), "bulk")
	if err != nil {
		t.Fatal(err)
	}
	if s.Ready != 1+1+997 || s.Scheduled != 1 {
		t.Errorf("stats %+v, want 999 ready and 1 scheduled", s)
	}
	job, err := b.client.Get(t.Context(), "bulk", got.Jobs[500].ID)
	if err != nil || string(job.Payload) != `{"n":500}` {
		t.Errorf("job 500: %+v %v", job, err)
	}
}

func TestGetMissing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.want(b.do("GET", "/v1/queues/q/jobs/nope", producerSecret, ""), 404)
	if e := r.apiErr(t); e.Code != wire.CodeNotFound || e.Field != "id" {
		t.Errorf("error %+v", e)
	}
	// Ids are percent-encoded in paths: a slash or a question mark is fine.
	b.enqueue(worker.JobSpec{Queue: "q", ID: "a/b?c=d#e%f"})
	r = b.want(b.do("GET", "/v1/queues/q/jobs/a%2Fb%3Fc=d%23e%25f", producerSecret, ""), 200)
	var v wire.Job
	if r.json(t, &v); v.ID != "a/b?c=d#e%f" {
		t.Errorf("id %q", v.ID)
	}
}

// TestCancel: a producer cancels a job that has not started (deleted) and
// a running one (its handler's context ends with ErrCancelled, the job is
// dead with the last error "cancelled" and can be requeued); a dead job is
// refused with 409 and left as it is.
func TestCancel(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, spec := range []worker.JobSpec{{Queue: "later", ID: "scheduled", Delay: time.Hour}, {Queue: "idle", ID: "ready"}} {
		b.enqueue(spec)
		path := "/v1/queues/" + spec.Queue + "/jobs/" + spec.ID
		b.want(b.do("DELETE", path, producerSecret, ""), 204)
		b.want(b.do("GET", path, producerSecret, ""), 404)
		r := b.want(b.do("DELETE", path, producerSecret, ""), 404)
		if e := r.apiErr(t); e.Code != wire.CodeNotFound || e.Field != "id" {
			t.Errorf("%s cancelled twice: error %+v", spec.ID, e)
		}
	}

	// A running job: its handler is told to stop, and what it returns is
	// ignored. Run again after the requeue, it succeeds.
	started, causes := make(chan worker.Job, 2), make(chan error, 1)
	b.run("busy", func(ctx context.Context, j *worker.Job) error {
		started <- *j
		if j.LastError == "cancelled" {
			return nil // the run after the requeue
		}
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return nil
	}, worker.QueueOptions{Concurrency: 1})
	b.enqueue(worker.JobSpec{Queue: "busy", ID: "running"})
	<-started
	b.want(b.do("DELETE", "/v1/queues/busy/jobs/running", producerSecret, ""), 204)
	select {
	case cause := <-causes:
		if !errors.Is(cause, worker.ErrCancelled) {
			t.Errorf("the handler's context ended with %v, want ErrCancelled", cause)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the handler's context did not end within 10s of the cancel")
	}
	r := b.want(b.do("GET", "/v1/queues/busy/jobs/running", producerSecret, ""), 200)
	var v wire.Job
	if r.json(t, &v); v.State != "dead" || v.Attempts != 1 || v.LastError != "cancelled" || v.DiedAt == nil {
		t.Errorf("cancelled running job: %s", r.body)
	}

	// A dead job, cancelled or failed, is refused and left as it is.
	b.kill("doomed", "x")
	for _, path := range []string{"/v1/queues/busy/jobs/running", "/v1/queues/doomed/jobs/x"} {
		before := b.snapshot()
		r = b.want(b.do("DELETE", path, producerSecret, ""), 409)
		if e := r.apiErr(t); e.Code != wire.CodeConflict || e.Field != "id" || !strings.Contains(e.Message, "job is dead") ||
			!strings.Contains(e.Message, "requeue it or purge it") {
			t.Errorf("%s: error %+v", path, e)
		}
		if !maps.Equal(b.snapshot(), before) {
			t.Errorf("%s: a refused cancel changed Redis", path)
		}
	}

	b.want(b.do("POST", "/v1/queues/busy/dead/requeue", adminSecret, `{"ids": ["running"]}`), 200)
	select {
	case j := <-started:
		if j.Attempt != 1 || j.LastError != "cancelled" {
			t.Errorf("the requeued job ran with attempt %d, last error %q; want 1, cancelled", j.Attempt, j.LastError)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the requeued job did not run within 10s")
	}
	testkit.Eventually(t, 10*time.Second, "the requeued job acked", func() bool {
		_, err := b.client.Get(t.Context(), "busy", "running")
		return errors.Is(err, worker.ErrNotFound)
	})
}

func TestQueues(t *testing.T) {
	t.Parallel()
	b := setup(t)
	// Two processes serve emails; the fleet is read from Redis.
	limit := worker.RateLimit{N: 100, Per: time.Second}
	idle := func(context.Context, *worker.Job) error { return nil }
	b.run("emails", idle, worker.QueueOptions{Concurrency: 20, RateLimit: limit})
	b.run("emails", idle, worker.QueueOptions{Concurrency: 5, RateLimit: limit})
	b.enqueue(worker.JobSpec{Queue: "emails", Delay: time.Hour}, worker.JobSpec{Queue: "audit"})

	var q wire.Queue
	var r reply
	testkit.Eventually(t, 10*time.Second, "a leader and both workers of emails", func() bool {
		r = b.want(b.do("GET", "/v1/queues/emails", adminSecret, ""), 200)
		r.json(t, &q)
		return q.Leader != nil && len(q.Workers) == 2
	})
	leaders := 0
	for _, w := range q.Workers {
		if w.Leader {
			leaders++
			if w.ID != *q.Leader {
				t.Errorf("worker %s is marked leader, the queue's leader is %s", w.ID, *q.Leader)
			}
		}
		if w.RateLimit == nil || *w.RateLimit != "100 per 1s" || w.SeenAt.IsZero() || time.Since(w.SeenAt) > time.Minute {
			t.Errorf("worker %+v", w)
		}
	}
	if q.Name != "emails" || q.Jobs != (wire.Counts{Scheduled: 1}) || leaders != 1 || q.Concurrency != 25 ||
		q.RateLimit == nil || *q.RateLimit != "100 per 1s" {
		t.Errorf("GET /v1/queues/emails: %s", r.body)
	}

	r = b.want(b.do("GET", "/v1/queues", adminSecret, ""), 200)
	var list struct{ Queues []wire.Queue }
	r.json(t, &list)
	if len(list.Queues) != 2 || list.Queues[0].Name != "audit" || list.Queues[1].Name != "emails" ||
		list.Queues[0].Jobs.Ready != 1 || list.Queues[0].Leader != nil || list.Queues[0].RateLimit != nil ||
		list.Queues[0].Workers == nil || list.Queues[1].Concurrency != 25 {
		t.Errorf("GET /v1/queues: %s", r.body)
	}
	if !strings.Contains(string(r.body), `"leader":null`) || !strings.Contains(string(r.body), `"workers":[]`) {
		t.Errorf("a queue no process serves should show leader null and no workers: %s", r.body)
	}
	// A queue no one used is empty, not missing (as worker.Client.Stats).
	r = b.want(b.do("GET", "/v1/queues/unused", adminSecret, ""), 200)
	if r.json(t, &q); q.Jobs != (wire.Counts{}) || q.Concurrency != 0 {
		t.Errorf("unused queue: %s", r.body)
	}
}

// failingFleet is a backend whose fleet lookups fail.
type failingFleet struct{ *admin.Client }

func (failingFleet) Fleet(context.Context, string) (admin.Fleet, error) {
	return admin.Fleet{}, errors.New("fleet lookup exploded")
}

func TestQueuesFleetError(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		backend := o.Backend
		o.Backend = func() admin.Operator { return failingFleet{backend().(*admin.Client)} }
	})
	r := b.want(b.do("GET", "/v1/queues/q", adminSecret, ""), 500)
	if e := r.apiErr(t); e.Code != wire.CodeInternal || strings.Contains(e.Message, "exploded") {
		t.Errorf("error %+v: internal errors keep their detail in the log", e)
	}
	if !strings.Contains(b.logs.String(), "fleet lookup exploded") {
		t.Errorf("the cause was not logged:\n%s", b.logs.String())
	}
}

// TestDead: the dead set is one list (GET …/jobs?state=dead) and one
// triage (POST …/dead/requeue and …/dead/purge, by ids or by filter); the
// routes that duplicated them are gone.
func TestDead(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.kill("q", "d1", "d2", "d3", "d4")

	var ids []string
	cursor := ""
	for pages := 0; ; pages++ {
		path := "/v1/queues/q/jobs?state=dead&limit=3"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		r := b.want(b.do("GET", path, adminSecret, ""), 200)
		var page wire.Page
		r.json(t, &page)
		for _, j := range page.Jobs {
			ids = append(ids, j.ID)
			if j.State != "dead" || j.DiedAt == nil || j.LastError != "permanent: boom "+j.ID || j.Attempts != 1 || string(j.Payload) != `{"n":1}` {
				t.Errorf("dead job %+v", j)
			}
		}
		if page.NextCursor == nil {
			if !strings.Contains(string(r.body), `"next_cursor":null`) {
				t.Errorf("the last page should say next_cursor null: %s", r.body)
			}
			break
		}
		cursor = *page.NextCursor
		if pages > 3 {
			t.Fatal("paging does not end")
		}
	}
	if slices.Sort(ids); !slices.Equal(ids, []string{"d1", "d2", "d3", "d4"}) {
		t.Errorf("listed %v, want each dead job once", ids)
	}

	triage := func(action, queue, body string, matched, changed int) {
		t.Helper()
		r := b.want(b.do("POST", "/v1/queues/"+queue+"/dead/"+action, adminSecret, body), 200)
		var tr wire.Triage
		if r.json(t, &tr); string(tr.Action) != action || tr.Matched != matched || tr.Changed != changed || tr.NextCursor != nil {
			t.Errorf("%s %s: %s, want matched %d, changed %d", action, body, r.body, matched, changed)
		}
	}
	triage("requeue", "q", `{"ids": ["d1"]}`, 1, 1)
	if j, err := b.client.Get(t.Context(), "q", "d1"); err != nil || j.State != worker.StateReady || j.Attempt != 0 {
		t.Errorf("requeued job: %+v %v", j, err)
	}
	triage("requeue", "q", `{"ids": ["d1"]}`, 0, 0) // not dead any more

	triage("purge", "q", `{"ids": ["d2"]}`, 1, 1)
	b.want(b.do("GET", "/v1/queues/q/jobs/d2", adminSecret, ""), 404)
	triage("purge", "q", `{"ids": ["d1"]}`, 0, 0) // d1 is due: never purged
	if _, err := b.client.Get(t.Context(), "q", "d1"); err != nil {
		t.Errorf("purge deleted a job that was not dead: %v", err)
	}

	// Without a body: every dead job.
	triage("requeue", "q", "", 2, 2)
	b.kill("q2", "e1", "e2")
	triage("purge", "q2", "", 2, 2)
	if s, _ := b.client.Stats(t.Context(), "q2"); s.Dead != 0 {
		t.Errorf("after purge all: %+v", s)
	}

	// The dead set's other entry points are gone.
	b.kill("q3", "f1")
	for _, route := range [][2]string{
		{"GET", "/v1/queues/q3/dead"}, {"DELETE", "/v1/queues/q3/dead"},
		{"POST", "/v1/queues/q3/dead/f1/requeue"}, {"DELETE", "/v1/queues/q3/dead/f1"},
	} {
		r := b.want(b.do(route[0], route[1], adminSecret, ""), 404)
		if e := r.apiErr(t); e.Code != wire.CodeNotFound || !strings.Contains(e.Message, "no route") {
			t.Errorf("%s %s: %+v", route[0], route[1], e)
		}
	}
	if s, _ := b.client.Stats(t.Context(), "q3"); s.Dead != 1 {
		t.Errorf("a removed route changed the dead set: %+v", s)
	}
}

func TestUnavailable(t *testing.T) {
	t.Parallel()
	h, err := New(Options{Backend: func() admin.Operator { return nil }, InsecureNoAuth: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, h)
	resp, err := srv.Client().Post(srv.URL+"/v1/queues/q/jobs", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Errorf("status %d, Retry-After %q; want 503 and 1", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	// The document needs no Redis.
	resp, err = srv.Client().Get(srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("openapi.json: %d", resp.StatusCode)
	}
}

func TestDisabled(t *testing.T) {
	t.Parallel()
	srv := newTestServer(t, Disabled("the HTTP API is disabled: configure admin.tokens"))
	resp, err := srv.Client().Post(srv.URL+"/v1/queues/q/jobs", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Error Error }
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusNotFound || e.Error.Code != wire.CodeNotFound || !strings.Contains(e.Error.Message, "admin.tokens") {
		t.Errorf("%d %+v", resp.StatusCode, e)
	}
}

// slowBackend is a backend whose reads wait for their context.
type slowBackend struct{ *admin.Client }

func (slowBackend) Get(ctx context.Context, _, _ string) (*worker.Job, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestWriteTimeout: a backend call that outlasts the write timeout ends
// in time for a 503 to reach the client.
func TestWriteTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		backend := o.Backend
		o.Backend = func() admin.Operator { return slowBackend{backend().(*admin.Client)} }
		o.WriteTimeout = 300 * time.Millisecond
	})
	start := time.Now()
	r := b.want(b.do("GET", "/v1/queues/q/jobs/x", producerSecret, ""), 503)
	if e := r.apiErr(t); e.Code != wire.CodeUnavailable || r.header.Get("Retry-After") != "1" {
		t.Errorf("error %+v, Retry-After %q", e, r.header.Get("Retry-After"))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
}

// fullRedis is a backend whose Redis refuses enqueues: out of memory.
type fullRedis struct{ *admin.Client }

func (fullRedis) Enqueue(context.Context, []worker.JobSpec) ([]worker.EnqueueResult, error) {
	return nil, fmt.Errorf("enqueue to queue \"q\" refused, nothing stored: %w: OOM command not allowed", worker.ErrRedisOOM)
}

// TestEnqueueWhileRedisIsFull: an enqueue Redis refuses for lack of memory
// is a 503 that says so, with Retry-After, logged as a warning; the API's Go
// client returns an error that wraps worker.ErrRedisOOM.
func TestEnqueueWhileRedisIsFull(t *testing.T) {
	t.Parallel()
	b := setup(t, func(o *Options) {
		backend := o.Backend
		o.Backend = func() admin.Operator { return fullRedis{backend().(*admin.Client)} }
	})
	r := b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"payload":"x"}`), 503)
	if e := r.apiErr(t); e.Code != wire.CodeUnavailable || !strings.Contains(e.Message, "out of memory") {
		t.Errorf("error %+v, want unavailable naming the cause", e)
	}
	if got := r.header.Get("Retry-After"); got != "10" {
		t.Errorf("Retry-After %q, want 10", got)
	}
	if !strings.Contains(b.logs.String(), "out of memory") {
		t.Errorf("the refusal was not logged:\n%s", b.logs.String())
	}
	_, err := enqueueOne(t.Context(), newClient(t, b, producerSecret), worker.JobSpec{Queue: "q"})
	if !errors.Is(err, worker.ErrRedisOOM) {
		t.Errorf("client error %v, want one that wraps worker.ErrRedisOOM", err)
	}
}
