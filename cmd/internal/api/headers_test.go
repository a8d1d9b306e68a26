package api

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestEnqueueHeaders: headers sent with an enqueue, single or batch, are
// stored as sent and shown by GET; an empty object or null is no headers.
func TestEnqueueHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := t.Context()
	sent := map[string]string{"tenant": "acme", "x.y_z-1": "a=b <c> é", "empty": ""}

	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret,
		`{"id": "h1", "delay": "1h", "headers": {"tenant": "acme", "x.y_z-1": "a=b <c> é", "empty": ""}}`), http.StatusCreated)
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "h2", "delay": "1h", "headers": {}}`), http.StatusCreated)
	b.want(b.do("POST", "/v1/queues/q/jobs", producerSecret, `{"id": "h3", "delay": "1h", "headers": null}`), http.StatusCreated)
	b.want(b.do("POST", "/v1/queues/q/jobs/batch", producerSecret,
		`{"jobs": [{"id": "b1", "delay": "1h", "headers": {"tenant": "acme", "x.y_z-1": "a=b <c> é", "empty": ""}}, {"id": "b2", "delay": "1h"}]}`), http.StatusOK)

	for id, want := range map[string]map[string]string{"h1": sent, "h2": nil, "h3": nil, "b1": sent, "b2": nil} {
		direct, err := b.client.Get(ctx, "q", id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(direct.Headers, want) {
			t.Errorf("%s: stored headers %q, want %q", id, direct.Headers, want)
		}
		r := b.want(b.do("GET", "/v1/queues/q/jobs/"+id, producerSecret, ""), http.StatusOK)
		var v wire.Job
		r.json(t, &v)
		if !reflect.DeepEqual(v.Headers, want) {
			t.Errorf("%s: GET shows headers %q, want %q", id, v.Headers, want)
		}
		if has := strings.Contains(string(r.body), `"headers"`); has != (want != nil) {
			t.Errorf("%s: GET %s: headers present %v", id, r.body, has)
		}
	}
}

// TestClientHeaders: the API's Go client sends a spec's headers and reads
// them back as admin.Client does, and a bad header fails as it does on
// admin.Client, naming Headers["name"].
func TestClientHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	c := newClient(t, b, producerSecret)
	ctx := t.Context()
	headers := map[string]string{"tenant": "acme", "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}

	id, err := enqueueOne(ctx, c, worker.JobSpec{Queue: "q", ID: "one", Delay: time.Hour, Headers: headers})
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Enqueue(ctx, []worker.JobSpec{{Queue: "q", ID: "two", Delay: time.Hour, Headers: headers}, {Queue: "q", ID: "three"}})
	if err != nil || res[0].Err != nil || res[1].Err != nil {
		t.Fatalf("batch: %+v %v", res, err)
	}
	for _, id := range []string{id, "two", "three"} {
		direct, err := b.client.Get(ctx, "q", id)
		if err != nil {
			t.Fatal(err)
		}
		viaAPI, err := c.Get(ctx, "q", id)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(viaAPI, direct) {
			t.Errorf("%s: Get through the API\n%+v\ndirectly\n%+v", id, viaAPI, direct)
		}
		want := headers
		if id == "three" {
			want = nil
		}
		if !reflect.DeepEqual(direct.Headers, want) {
			t.Errorf("%s: headers %q, want %q", id, direct.Headers, want)
		}
	}

	for _, bad := range []map[string]string{
		{"Tenant": "a"},
		{"a": strings.Repeat("v", worker.MaxHeaderValueLen+1)},
		{"a": "x\ny"},
	} {
		spec := worker.JobSpec{Queue: "q", Headers: bad}
		_, direct := enqueueOne(ctx, b.client, spec)
		_, viaAPI := enqueueOne(ctx, c, spec)
		var dve, ave *worker.ValidationError
		if !errors.As(direct, &dve) || !errors.As(viaAPI, &ave) || *dve != *ave || viaAPI.Error() != direct.Error() {
			t.Errorf("headers %q: through the API %v, directly %v", bad, viaAPI, direct)
		}
		if dve != nil && !strings.HasPrefix(dve.Field, `Headers[`) {
			t.Errorf("headers %q: field %q", bad, dve.Field)
		}
	}
}

// spanSpy is a backend that reports the span context each enqueue is
// given.
type spanSpy struct {
	admin.Operator
	got chan trace.SpanContext
}

func (s spanSpy) Enqueue(ctx context.Context, specs []worker.JobSpec) ([]worker.EnqueueResult, error) {
	s.got <- trace.SpanContextFromContext(ctx)
	return s.Operator.Enqueue(ctx, specs)
}

// TestEnqueueTraceContext: the W3C trace context of an enqueue request
// (traceparent, tracestate) reaches the backend as the remote parent of
// its context, for a single job and a batch; a request without one, or
// with a malformed one, is enqueued without.
func TestEnqueueTraceContext(t *testing.T) {
	t.Parallel()
	got := make(chan trace.SpanContext, 1)
	b := setup(t, func(o *Options) {
		inner := o.Backend
		o.Backend = func() admin.Operator { return spanSpy{Operator: inner(), got: got} }
	})
	const (
		traceID = "0af7651916cd43dd8448eb211c80319c"
		spanID  = "b7ad6b7169203331"
	)
	for _, tt := range []struct {
		name, path, body, traceparent string
		status                        int
		valid                         bool
	}{
		{"single", "/v1/queues/q/jobs", `{}`, "00-" + traceID + "-" + spanID + "-01", http.StatusCreated, true},
		{"batch", "/v1/queues/q/jobs/batch", `{"jobs": [{}, {}]}`, "00-" + traceID + "-" + spanID + "-01", http.StatusOK, true},
		{"none", "/v1/queues/q/jobs", `{}`, "", http.StatusCreated, false},
		{"malformed", "/v1/queues/q/jobs", `{}`, "00-nonsense", http.StatusCreated, false},
	} {
		req := b.request("POST", tt.path, producerSecret, tt.body)
		if tt.traceparent != "" {
			req.Header.Set("Traceparent", tt.traceparent)
			req.Header.Set("Tracestate", "vendor=v1")
		}
		b.want(b.send(req), tt.status)
		sc := <-got
		if !tt.valid {
			if sc.IsValid() {
				t.Errorf("%s: the enqueue got span context %+v", tt.name, sc)
			}
			continue
		}
		if sc.TraceID().String() != traceID || sc.SpanID().String() != spanID || !sc.IsRemote() || !sc.IsSampled() ||
			sc.TraceState().Get("vendor") != "v1" {
			t.Errorf("%s: the enqueue got span context %+v", tt.name, sc)
		}
	}
}
