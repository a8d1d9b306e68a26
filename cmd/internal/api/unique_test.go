package api

import (
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// TestEnqueuePriorityAndUnique: the job's priority and unique key reach the
// store as sent, and GET shows them; a job without them shows its
// priority only.
func TestEnqueuePriorityAndUnique(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret,
		`{"id": "order-42", "priority": "high", "unique_key": "order:42", "unique_for": "90m", "unique_after_finish": true, "delay": "1h"}`), 201)
	job, err := b.client.Get(t.Context(), "q", "order-42")
	if err != nil {
		t.Fatal(err)
	}
	if job.Priority != worker.PriorityHigh || job.UniqueKey != "order:42" || job.UniqueFor != 90*time.Minute || !job.UniqueAfterFinish {
		t.Errorf("stored job %+v", job)
	}
	r := b.want(b.do("GET", "/v1/queues/q/jobs/order-42", producerSecret, ""), 200)
	var v wire.Job
	if r.json(t, &v); v.Priority != "high" || v.UniqueKey != "order:42" || v.UniqueFor != "1h30m0s" || !v.UniqueAfterFinish {
		t.Errorf("GET: %s", r.body)
	}

	tests := []struct {
		name, body string
		want       worker.Priority
	}{
		{"low", `{"priority": "low"}`, worker.PriorityLow},
		{"normal", `{"priority": "normal"}`, worker.PriorityNormal},
		{"left out", `{}`, worker.PriorityNormal},
		{"null", `{"priority": null, "unique_key": null, "unique_for": null, "unique_after_finish": null}`, worker.PriorityNormal},
	}
	for _, tt := range tests {
		r := b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, tt.body), 201)
		var got enqueued
		r.json(t, &got)
		if j, err := b.client.Get(t.Context(), "q", got.ID); err != nil || j.Priority != tt.want || j.UniqueKey != "" {
			t.Errorf("%s: stored %+v, %v; want priority %s and no unique key", tt.name, j, err, tt.want)
		}
		r = b.want(b.do("GET", "/v1/queues/q/jobs/"+got.ID, producerSecret, ""), 200)
		if want := `"priority":"` + tt.want.String() + `"`; !strings.Contains(string(r.body), want) || strings.Contains(string(r.body), "unique") {
			t.Errorf("%s: GET %s, want %s and no unique field", tt.name, r.body, want)
		}
	}
}

// TestEnqueueUniqueConflict: an enqueue whose unique key is held is a 409
// naming unique_key, whose existing_id is the holder's id, and writes
// nothing; a duplicate id carries its id alike. Once the holder finished
// the key is free, unless its window still holds it.
func TestEnqueueUniqueConflict(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r := b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "order:42", "payload": 1, "delay": "1h"}`), 201)
	var first enqueued
	r.json(t, &first)

	before := b.snapshot()
	for _, body := range []string{
		`{"unique_key": "order:42", "payload": 2}`,
		`{"id": "another", "unique_key": "order:42", "priority": "high"}`,
	} {
		r = b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, body), 409)
		if e := r.apiErr(t); e.Code != wire.CodeConflict || e.Field != "unique_key" || e.ExistingID != first.ID ||
			!strings.Contains(e.Message, `"order:42"`) || !strings.Contains(e.Message, first.ID) {
			t.Errorf("%s: error %+v, want a conflict on unique_key held by %s", body, e, first.ID)
		}
		if !strings.Contains(string(r.body), `"existing_id":"`+first.ID+`"`) {
			t.Errorf("%s: the body does not carry existing_id: %s", body, r.body)
		}
	}
	r = b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "`+first.ID+`"}`), 409)
	if e := r.apiErr(t); e.Field != "id" || e.ExistingID != first.ID {
		t.Errorf("duplicate id: error %+v, want field id and existing_id %s", e, first.ID)
	}
	if !maps.Equal(b.snapshot(), before) {
		t.Error("a refused enqueue changed Redis")
	}
	if j, err := b.client.Get(t.Context(), "q", first.ID); err != nil || string(j.Payload) != "1" {
		t.Errorf("the holder changed: %+v %v", j, err)
	}

	// A batch: the held key, a fresh key twice (the second is held by the
	// first), an existing id.
	r = b.want(b.do("POST", "/v1/queues/q/jobs/batch", producerSecret,
		`{"jobs": [{"unique_key": "order:42"}, {"unique_key": "order:43"}, {"id": "x", "unique_key": "order:43"}, {"id": "`+first.ID+`"}]}`), 200)
	var got batchReply
	r.json(t, &got)
	if len(got.Jobs) != 4 || got.Created != 1 || got.Conflicts != 3 {
		t.Fatalf("batch: %s", r.body)
	}
	second := got.Jobs[1].ID
	for i, want := range []struct{ field, existing string }{
		0: {"jobs[0].unique_key", first.ID},
		2: {"jobs[2].unique_key", second},
		3: {"jobs[3].id", first.ID},
	} {
		if want.field == "" {
			continue
		}
		item := got.Jobs[i]
		if item.Status != "conflict" || item.ID != want.existing || item.Error == nil || item.Error.Field != want.field || item.Error.ExistingID != want.existing {
			t.Errorf("job %d: %+v (error %+v), want a conflict on %s with %s", i, item, item.Error, want.field, want.existing)
		}
	}
	if item := got.Jobs[1]; item.Status != "created" || item.Error != nil {
		t.Errorf("job 1: %+v, want created", item)
	}

	// The holder cancelled: the key is free. A key with a window stays
	// held after its job is gone.
	b.want(b.do("DELETE", "/v1/queues/q/jobs/"+first.ID, producerSecret, ""), 204)
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "order:42"}`), 201)
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "windowed", "unique_key": "w", "unique_for": "1h", "delay": "1h"}`), 201)
	b.want(b.do("DELETE", "/v1/queues/q/jobs/windowed", producerSecret, ""), 204)
	r = b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"unique_key": "w"}`), 409)
	if e := r.apiErr(t); e.Field != "unique_key" || e.ExistingID != "windowed" {
		t.Errorf("within the window: error %+v, want the key held by windowed", e)
	}
}

// TestClientPriorityAndUnique: the API client round-trips priorities and
// unique keys as admin.Client does, a held key included: ErrDuplicate with
// the holder's id.
func TestClientPriorityAndUnique(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := newClient(t, b, producerSecret)
	ctx := t.Context()

	spec := worker.JobSpec{Queue: "q", ID: "order-42", Delay: time.Hour, Priority: worker.PriorityLow,
		UniqueKey: "order:42", UniqueFor: 36 * time.Hour, UniqueAfterFinish: true}
	if id, err := enqueueOne(ctx, c, spec); err != nil || id != "order-42" {
		t.Fatalf("enqueue: %q %v", id, err)
	}
	viaAPI, err := c.Get(ctx, "q", "order-42")
	if err != nil {
		t.Fatal(err)
	}
	direct, err := b.client.Get(ctx, "q", "order-42")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(viaAPI, direct) || viaAPI.Priority != worker.PriorityLow || viaAPI.UniqueFor != 36*time.Hour || !viaAPI.UniqueAfterFinish {
		t.Errorf("Get through the API\n%+v\ndirectly\n%+v", viaAPI, direct)
	}

	// A held key, through each client.
	again := worker.JobSpec{Queue: "q", UniqueKey: "order:42", Payload: []byte("again")}
	id, err := enqueueOne(ctx, c, again)
	directID, directErr := enqueueOne(ctx, b.client, again)
	if !errors.Is(err, worker.ErrUniqueKeyHeld) || id != "order-42" || !errors.Is(directErr, worker.ErrUniqueKeyHeld) || directID != id {
		t.Errorf("held key: %q %v; directly %q %v; want ErrDuplicate and order-42 from both", id, err, directID, directErr)
	}
	var e *Error
	if !errors.As(err, &e) || e.Code != wire.CodeConflict || e.Field != "unique_key" || e.ExistingID != "order-42" {
		t.Errorf("held key: %#v", err)
	}
	if id, err := enqueueOne(ctx, c, worker.JobSpec{Queue: "q", ID: "order-42"}); !errors.Is(err, worker.ErrDuplicate) || errors.Is(err, worker.ErrUniqueKeyHeld) || id != "order-42" {
		t.Errorf("existing id: %q %v", id, err)
	}
	res, err := c.Enqueue(ctx, []worker.JobSpec{{Queue: "q", UniqueKey: "order:42"}, {Queue: "q", Priority: worker.PriorityHigh, UniqueKey: "fresh"}})
	if err != nil || len(res) != 2 || !errors.Is(res[0].Err, worker.ErrUniqueKeyHeld) || res[0].ID != "order-42" || res[1].Err != nil {
		t.Fatalf("batch: %+v %v", res, err)
	}
	if j, err := b.client.Get(ctx, "q", res[1].ID); err != nil || j.Priority != worker.PriorityHigh || j.UniqueKey != "fresh" {
		t.Errorf("batch job: %+v %v", j, err)
	}

	// Bad values fail as on admin.Client, naming the Go field.
	for _, tt := range []struct {
		spec  worker.JobSpec
		field string
		same  bool // the same message as admin.Client's
	}{
		{worker.JobSpec{Queue: "q", UniqueKey: "a b"}, "UniqueKey", true},
		{worker.JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: -time.Second}, "UniqueFor", true},
		{worker.JobSpec{Queue: "q", UniqueKey: "k", UniqueFor: 366 * 24 * time.Hour}, "UniqueFor", true},
		{worker.JobSpec{Queue: "q", UniqueFor: time.Hour}, "UniqueFor", false},
		{worker.JobSpec{Queue: "q", UniqueKey: "k", UniqueAfterFinish: true}, "UniqueAfterFinish", false},
		{worker.JobSpec{Queue: "q", Priority: 5}, "Priority", false},
	} {
		_, err := enqueueOne(ctx, c, tt.spec)
		_, direct := enqueueOne(ctx, b.client, tt.spec)
		var ve *worker.ValidationError
		if !errors.Is(err, worker.ErrInvalid) || !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("%+v: %v, want a ValidationError of %s", tt.spec, err, tt.field)
			continue
		}
		if tt.same && (direct == nil || err.Error() != direct.Error()) {
			t.Errorf("%+v: %v; directly %v", tt.spec, err, direct)
		}
	}
}
