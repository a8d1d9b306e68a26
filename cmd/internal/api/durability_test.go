package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestEnqueueNotReplicated: without replicas, a single enqueue that asks
// for one answers 202 with the stored job's id, replicated false and the
// not_replicated error; a batch answers 200 with each created job marked.
func TestEnqueueNotReplicated(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "a", "durability": {"replicas": 1, "timeout": "20ms"}}`), http.StatusAccepted)
	var one enqueued
	r.json(t, &one)
	if one.ID != "a" || one.Replicated == nil || *one.Replicated || one.Error == nil || one.Error.Code != wire.CodeNotReplicated ||
		!strings.Contains(one.Error.Message, "confirmed on 0 of 1 replicas within 20ms; the job may not survive a failover") {
		t.Errorf("reply %s", r.body)
	}
	if loc := r.header.Get("Location"); loc != "/v1/queues/q/jobs/a" {
		t.Errorf("Location %q", loc)
	}
	if _, err := b.client.Get(t.Context(), "q", "a"); err != nil {
		t.Errorf("the job was not stored: %v", err)
	}

	// The batch's durability is that of its jobs without their own.
	r = b.want(b.do("POST", "/v1/queues/q/jobs/batch", producerSecret, `{
		"durability": {"replicas": 1, "timeout": "10ms"},
		"jobs": [{"id": "b"}, {"id": "c", "durability": {"replicas": 2, "timeout": "10ms"}}, {"id": "a"}]}`), http.StatusOK)
	var batch batchReply
	r.json(t, &batch)
	if batch.Created != 2 || batch.Conflicts != 1 || batch.NotReplicated != 2 || len(batch.Jobs) != 3 {
		t.Fatalf("reply %s", r.body)
	}
	for i, want := range []string{"0 of 1 replicas", "0 of 2 replicas"} {
		item := batch.Jobs[i]
		if item.Status != "created" || item.Replicated == nil || *item.Replicated || item.Error == nil ||
			item.Error.Code != wire.CodeNotReplicated || !strings.Contains(item.Error.Message, want) {
			t.Errorf("jobs[%d] = %+v; want created, not replicated: %s", i, item, want)
		}
	}
	if item := batch.Jobs[2]; item.Status != "conflict" || item.Replicated != nil {
		t.Errorf("jobs[2] (an existing id) = %+v", item)
	}

	// Without a durability, nothing changes.
	r = b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "d"}`), http.StatusCreated)
	if strings.Contains(string(r.body), "replicated") {
		t.Errorf("reply without a durability: %s", r.body)
	}

	// The Go client of the API reports it as admin.Client does.
	c := newClient(t, b, producerSecret)
	d := worker.Durability{Replicas: 1, Timeout: 10 * time.Millisecond}
	id, err := enqueueOne(t.Context(), c, worker.JobSpec{Queue: "q", ID: "e", Durability: d})
	if id != "e" || !errors.Is(err, worker.ErrNotReplicated) || wire.CodeOf(err) != wire.CodeNotReplicated {
		t.Errorf("Client.Enqueue = %q, %v; want the id and ErrNotReplicated", id, err)
	}
	res, err := c.Enqueue(t.Context(), []worker.JobSpec{{Queue: "q", ID: "f", Durability: d}, {Queue: "q", ID: "e"}})
	if err != nil || !errors.Is(res[0].Err, worker.ErrNotReplicated) || !errors.Is(res[1].Err, worker.ErrDuplicate) {
		t.Errorf("Client.Enqueue of a batch = %+v, %v", res, err)
	}
	// A bad durability reads as the library's validation error.
	_, err = enqueueOne(t.Context(), c, worker.JobSpec{Queue: "q", Durability: worker.Durability{Replicas: 1}})
	var ve *worker.ValidationError
	if !errors.As(err, &ve) || ve.Field != "Durability.Timeout" {
		t.Errorf("Client.Enqueue without a timeout: %v; want invalid Durability.Timeout", err)
	}
}

// TestEnqueueReplicated: with a replica in sync, the enqueue is 201 as
// ever.
func TestEnqueueReplicated(t *testing.T) {
	t.Parallel()
	master := testkit.StartPrivate(t)
	testkit.StartReplica(t, master)
	client, err := admin.NewClient(master.Client(t), worker.Config{Prefix: testkit.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	h, err := New(Options{Backend: func() admin.Operator { return client }, Tokens: []Token{{Name: "shop", Secret: producerSecret, Role: RoleProducer}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	b := &bundle{t: t, srv: srv}
	r := b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"durability": {"replicas": 1, "timeout": "5s"}}`), http.StatusCreated)
	if strings.Contains(string(r.body), "replicated") {
		t.Errorf("reply %s", r.body)
	}
	r = b.want(b.do("POST", "/v1/queues/q/jobs/batch", producerSecret, `{"durability": {"replicas": 1, "timeout": "5s"}, "jobs": [{}, {}]}`), http.StatusOK)
	var batch batchReply
	r.json(t, &batch)
	if batch.Created != 2 || batch.NotReplicated != 0 || strings.Contains(string(r.body), "replicated") {
		t.Errorf("reply %s", r.body)
	}
}
