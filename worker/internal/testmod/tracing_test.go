package testmod_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
)

// traced is a TracerProvider whose spans a test reads once they end.
type traced struct {
	tp  *sdktrace.TracerProvider
	exp *tracetest.InMemoryExporter
}

func newTraced(t *testing.T) traced {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.WithoutCancel(t.Context())) })
	return traced{tp: tp, exp: exp}
}

// request starts the span of a test's own, as a traced caller of Enqueue
// would have it.
func (tr traced) request(ctx context.Context) (context.Context, trace.Span) {
	return tr.tp.Tracer("test").Start(ctx, "request")
}

// named returns the ended spans called name, in the order they started.
func (tr traced) named(name string) tracetest.SpanStubs {
	var out tracetest.SpanStubs
	for _, s := range tr.exp.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
	return out
}

// waitSpans waits until n spans called name have ended and returns them.
func (tr traced) waitSpans(t *testing.T, name string, n int) tracetest.SpanStubs {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, fmt.Sprintf("%d spans %q", n, name), func() bool { return len(tr.named(name)) >= n })
	return tr.named(name)
}

// attrs maps a span's attributes by key.
func attrs(s tracetest.SpanStub) map[string]attribute.Value {
	m := make(map[string]attribute.Value, len(s.Attributes))
	for _, a := range s.Attributes {
		m[string(a.Key)] = a.Value
	}
	return m
}

// checkAttrs fails unless span s has every attribute of want (compared
// as printed, so that an int matches an int64) and none of absent.
func checkAttrs(t *testing.T, s tracetest.SpanStub, want map[string]any, absent ...string) {
	t.Helper()
	got := attrs(s)
	for k, w := range want {
		v, ok := got[k]
		if !ok || fmt.Sprint(v.AsInterface()) != fmt.Sprint(w) {
			t.Errorf("span %q attribute %s = %v, want %v", s.Name, k, v.AsInterface(), w)
		}
	}
	for _, k := range absent {
		if v, ok := got[k]; ok {
			t.Errorf("span %q has attribute %s = %v, want none", s.Name, k, v.AsInterface())
		}
	}
}

func hasEvent(s tracetest.SpanStub, name string) bool {
	return slices.ContainsFunc(s.Events, func(e sdktrace.Event) bool { return e.Name == name })
}

// spanSeen keeps the span context each attempt's handler found in its ctx.
type spanSeen struct {
	mu   sync.Mutex
	seen []trace.SpanContext
}

func (s *spanSeen) add(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, trace.SpanFromContext(ctx).SpanContext())
}

func (s *spanSeen) all() []trace.SpanContext {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen)
}

// TestTraceJob: a traced enqueue is a producer span under the caller's
// span, and each attempt a consumer span parented on it, in one trace; a
// failed attempt has status Error with its error, the handler's context
// carries its attempt's span.
func TestTraceJob(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		tr := newTraced(t)
		cfg := workertest.Config(t, prefix)
		cfg.TracerProvider = tr.tp
		c := workertest.NewClient(t, rdb, cfg)
		var seen spanSeen
		h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			seen.add(ctx)
			if job.Attempt == 1 {
				return errors.New("boom")
			}
			return nil
		})
		workertest.StartDaemon(t, rdb, workertest.Register(t, nil, "q", h, worker.QueueOptions{Backoff: worker.FixedSteps{time.Millisecond}}), cfg)

		ctx, req := tr.request(t.Context())
		id, err := c.Enqueue(ctx, worker.JobSpec{Queue: "q", Payload: []byte("x")})
		req.End()
		if err != nil {
			t.Fatalf("Enqueue: %v", err)
		}
		procs := tr.waitSpans(t, "process q", 2)
		sends := tr.named("send q")
		if len(sends) != 1 || len(procs) != 2 {
			t.Fatalf("got %d send and %d process spans, want 1 and 2", len(sends), len(procs))
		}
		send, root := sends[0], req.SpanContext()
		if send.SpanKind != trace.SpanKindProducer || send.Parent.SpanID() != root.SpanID() || send.SpanContext.TraceID() != root.TraceID() {
			t.Errorf("send span: kind %s, parent %s in trace %s; want producer under the request span %s of trace %s",
				send.SpanKind, send.Parent.SpanID(), send.SpanContext.TraceID(), root.SpanID(), root.TraceID())
		}
		checkAttrs(t, send, map[string]any{"messaging.system": "courier", "messaging.operation.type": "send",
			"messaging.operation.name": "send", "messaging.destination.name": "q", "messaging.message.id": id},
			"messaging.batch.message_count", "courier.job.kind")
		handlerSaw := seen.all()
		for i, p := range procs {
			attempt := i + 1
			if p.SpanKind != trace.SpanKindConsumer || p.Parent.SpanID() != send.SpanContext.SpanID() ||
				p.SpanContext.TraceID() != root.TraceID() || !p.Parent.IsRemote() {
				t.Errorf("attempt %d: kind %s, parent %s (remote %t) in trace %s; want a consumer child of the send span %s",
					attempt, p.SpanKind, p.Parent.SpanID(), p.Parent.IsRemote(), p.SpanContext.TraceID(), send.SpanContext.SpanID())
			}
			if len(p.Links) != 0 {
				t.Errorf("attempt %d has %d links, want none (parent, not link)", attempt, len(p.Links))
			}
			if i < len(handlerSaw) && handlerSaw[i].SpanID() != p.SpanContext.SpanID() {
				t.Errorf("attempt %d: the handler's ctx carried span %s, want the attempt's %s", attempt, handlerSaw[i].SpanID(), p.SpanContext.SpanID())
			}
			checkAttrs(t, p, map[string]any{"messaging.system": "courier", "messaging.operation.type": "process",
				"messaging.operation.name": "process", "messaging.destination.name": "q", "messaging.message.id": id,
				"courier.job.attempt": attempt})
		}
		failed, ok := procs[0], procs[1]
		checkAttrs(t, failed, map[string]any{"courier.job.outcome": "retry", "error.type": "*errors.errorString"})
		if failed.Status.Code != codes.Error || failed.Status.Description != "boom" || !hasEvent(failed, "exception") {
			t.Errorf("failed attempt: status %v %q, exception event %t; want Error \"boom\" with the event", failed.Status.Code, failed.Status.Description, hasEvent(failed, "exception"))
		}
		checkAttrs(t, ok, map[string]any{"courier.job.outcome": "success"}, "error.type")
		if ok.Status.Code != codes.Unset || hasEvent(ok, "exception") {
			t.Errorf("successful attempt: status %v, exception event %t; want Unset, none", ok.Status.Code, hasEvent(ok, "exception"))
		}
	})
}

// TestTraceKind: the send and process spans of a job of a kind carry it
// as courier.job.kind, on a queue split in 3 partitions.
func TestTraceKind(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		tr := newTraced(t)
		cfg := workertest.Config(t, prefix)
		cfg.TracerProvider = tr.tp
		c := workertest.NewClient(t, rdb, cfg)
		ok := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
		workertest.StartDaemon(t, rdb, workertest.Register(t, nil, "kq", worker.Kinds{"mail.send": ok}, worker.QueueOptions{Partitions: 3}), cfg)
		if _, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "kq", Kind: "mail.send"}); err != nil {
			t.Fatal(err)
		}
		proc := tr.waitSpans(t, "process kq", 1)[0]
		send := tr.named("send kq")[0]
		checkAttrs(t, send, map[string]any{"courier.job.kind": "mail.send"})
		checkAttrs(t, proc, map[string]any{"courier.job.kind": "mail.send", "courier.job.outcome": "success"})
	})
}

// TestTraceOutcomes: a snooze is no failure; a permanent error and a
// timeout end in the dead set with status Error and their error.type.
func TestTraceOutcomes(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		tr := newTraced(t)
		cfg := workertest.Config(t, prefix)
		cfg.TracerProvider = tr.tp
		c := workertest.NewClient(t, rdb, cfg)
		var snoozed sync.Once
		reg := workertest.Register(t, nil, "snooze", worker.HandlerFunc(func(context.Context, *worker.Job) error {
			err := error(nil)
			snoozed.Do(func() { err = worker.Snooze(time.Millisecond) })
			return err
		}), worker.QueueOptions{})
		reg = workertest.Register(t, reg, "permanent", worker.HandlerFunc(func(context.Context, *worker.Job) error {
			return worker.Permanent(errors.New("no such customer"))
		}), worker.QueueOptions{})
		reg = workertest.Register(t, reg, "slow", worker.HandlerFunc(func(ctx context.Context, _ *worker.Job) error {
			<-ctx.Done()
			return ctx.Err()
		}), worker.QueueOptions{Timeout: 20 * time.Millisecond, MaxAttempts: 1})
		workertest.StartDaemon(t, rdb, reg, cfg)
		for _, q := range []string{"snooze", "permanent", "slow"} {
			workertest.Enqueue(t, c, worker.JobSpec{Queue: q, ID: "j"})
		}

		sn := tr.waitSpans(t, "process snooze", 2)
		checkAttrs(t, sn[0], map[string]any{"courier.job.outcome": "snooze", "courier.job.attempt": 1}, "error.type")
		checkAttrs(t, sn[1], map[string]any{"courier.job.outcome": "success", "courier.job.attempt": 1})
		if sn[0].Status.Code != codes.Unset || hasEvent(sn[0], "exception") {
			t.Errorf("snoozed attempt: status %v, exception event %t; want neither", sn[0].Status.Code, hasEvent(sn[0], "exception"))
		}
		for q, want := range map[string]struct{ errType, text string }{
			"permanent": {"*errors.errorString", "permanent: no such customer"},
			"slow":      {"timeout", "context deadline exceeded (job timed out)"},
		} {
			p := tr.waitSpans(t, "process "+q, 1)[0]
			checkAttrs(t, p, map[string]any{"courier.job.outcome": "dead", "error.type": want.errType})
			if p.Status.Code != codes.Error || p.Status.Description != want.text {
				t.Errorf("queue %s: status %v %q, want Error %q", q, p.Status.Code, p.Status.Description, want.text)
			}
		}
	})
}

// TestTraceHeaders: a traced enqueue stores the trace context in a copy
// of each job's headers, the caller's map untouched, replacing the
// caller's own traceparent; a batch is one span; headers at the limits
// keep the job's own and the enqueue succeeds; untraced, nothing is added.
func TestTraceHeaders(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		tr := newTraced(t)
		cfg := workertest.Config(t, prefix)
		cfg.TracerProvider = tr.tp
		c := workertest.NewClient(t, rdb, cfg)
		plainCfg := workertest.Config(t, prefix)
		plain := workertest.NewClient(t, rdb, plainCfg)

		// The caller's span carries a trace state, which the jobs carry on.
		state, err := trace.ParseTraceState("vendor=abc")
		if err != nil {
			t.Fatal(err)
		}
		remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1, 2, 3}, SpanID: trace.SpanID{4, 5, 6},
			TraceFlags: trace.FlagsSampled, TraceState: state, Remote: true})
		ctx := trace.ContextWithRemoteSpanContext(t.Context(), remote)
		traceparent := func(s tracetest.SpanStub) string {
			return fmt.Sprintf("00-%s-%s-01", s.SpanContext.TraceID(), s.SpanContext.SpanID())
		}

		t.Run("one job", func(t *testing.T) {
			t.Parallel()
			own := map[string]string{"tenant": "acme", "traceparent": "00-11111111111111111111111111111111-2222222222222222-01"}
			before := maps.Clone(own)
			id, err := c.Enqueue(ctx, worker.JobSpec{Queue: "one", Headers: own})
			if err != nil {
				t.Fatalf("Enqueue: %v", err)
			}
			if !maps.Equal(own, before) {
				t.Errorf("the caller's headers became %v, want them untouched: %v", own, before)
			}
			send := tr.waitSpans(t, "send one", 1)[0]
			if send.Parent.SpanID() != remote.SpanID() {
				t.Errorf("send span's parent = %s, want the caller's %s", send.Parent.SpanID(), remote.SpanID())
			}
			want := map[string]string{"tenant": "acme", "traceparent": traceparent(send), "tracestate": "vendor=abc"}
			if got := workertest.GetJob(t, c, "one", id).Headers; !maps.Equal(got, want) {
				t.Errorf("stored headers = %v, want %v", got, want)
			}
		})

		t.Run("unique key held", func(t *testing.T) {
			t.Parallel()
			holder := workertest.Enqueue(t, c, worker.JobSpec{Queue: "unique", UniqueKey: "k", UniqueFor: time.Hour})
			id, err := c.Enqueue(ctx, worker.JobSpec{Queue: "unique", UniqueKey: "k", UniqueFor: time.Hour})
			if !errors.Is(err, worker.ErrUniqueKeyHeld) || id != holder {
				t.Fatalf("Enqueue = %q, %v; want the holder %q, ErrUniqueKeyHeld", id, err, holder)
			}
			sends := tr.waitSpans(t, "send unique", 2)
			checkAttrs(t, sends[1], map[string]any{"messaging.message.id": holder})
			if !hasEvent(sends[1], "exception") || sends[1].Status.Code == codes.Error {
				t.Errorf("a held unique key: status %v, exception event %t; want the event, no Error", sends[1].Status.Code, hasEvent(sends[1], "exception"))
			}
		})

		t.Run("batch", func(t *testing.T) {
			t.Parallel()
			shared := map[string]string{"tenant": "acme"}
			res, err := c.EnqueueMany(ctx, []worker.JobSpec{{Queue: "batch", Headers: shared}, {Queue: "batch", Headers: shared}, {Queue: "batch"}})
			if err != nil {
				t.Fatalf("EnqueueMany: %v", err)
			}
			if len(shared) != 1 {
				t.Errorf("the shared headers became %v", shared)
			}
			send := tr.waitSpans(t, "send batch", 1)[0]
			checkAttrs(t, send, map[string]any{"messaging.batch.message_count": 3, "messaging.destination.name": "batch"}, "messaging.message.id")
			for i, r := range res {
				if got := workertest.GetJob(t, c, "batch", r.ID).Headers["traceparent"]; got != traceparent(send) {
					t.Errorf("job %d: traceparent %q, want the batch's span %q", i, got, traceparent(send))
				}
			}
			if _, err := c.EnqueueMany(ctx, []worker.JobSpec{{Queue: "mixed-a"}, {Queue: "mixed-b"}}); err != nil {
				t.Fatalf("EnqueueMany: %v", err)
			}
			checkAttrs(t, tr.waitSpans(t, "send", 1)[0], map[string]any{"messaging.batch.message_count": 2}, "messaging.destination.name")
		})

		t.Run("limits", func(t *testing.T) {
			t.Parallel()
			full := map[string]string{} // MaxHeaders already
			for i := range worker.MaxHeaders {
				full[fmt.Sprintf("h%02d", i)] = "v"
			}
			almost := maps.Clone(full) // room for traceparent, not tracestate
			delete(almost, "h00")
			big := map[string]string{} // 8 headers of 1,020 bytes: no room for 66 more
			for i := range 8 {
				big[fmt.Sprintf("b%d", i)] = strings.Repeat("x", 1018)
			}
			for _, tc := range []struct {
				name    string
				headers map[string]string
				event   string
				want    []string // the trace headers stored
			}{
				{"full", full, "courier.trace_context.skipped", nil},
				{"almost", almost, "courier.trace_context.tracestate_dropped", []string{"traceparent"}},
				{"big", big, "courier.trace_context.skipped", nil},
			} {
				queue := "limits-" + tc.name
				id, err := c.Enqueue(ctx, worker.JobSpec{Queue: queue, Headers: tc.headers})
				if err != nil {
					t.Fatalf("%s: Enqueue: %v", tc.name, err)
				}
				got := workertest.GetJob(t, c, queue, id).Headers
				var trace []string
				for _, h := range []string{"traceparent", "tracestate"} {
					if _, ok := got[h]; ok {
						trace = append(trace, h)
					}
				}
				if !slices.Equal(trace, tc.want) || len(got) != len(tc.headers)+len(tc.want) {
					t.Errorf("%s: stored %d headers with trace headers %v; want %d with %v", tc.name, len(got), trace, len(tc.headers)+len(tc.want), tc.want)
				}
				send := tr.waitSpans(t, "send "+queue, 1)[0]
				if !hasEvent(send, tc.event) {
					t.Errorf("%s: send span has no event %s: %v", tc.name, tc.event, send.Events)
				}
				if tc.want == nil {
					checkAttrs(t, send, map[string]any{"courier.trace_context.skipped": 1})
				}
			}
		})

		t.Run("untraced client", func(t *testing.T) {
			t.Parallel()
			own := map[string]string{"tenant": "acme"}
			id := workertest.Enqueue(t, plain, worker.JobSpec{Queue: "plain", Headers: own})
			bare, err := plain.Enqueue(ctx, worker.JobSpec{Queue: "plain"})
			if err != nil {
				t.Fatalf("Enqueue: %v", err)
			}
			if got := workertest.GetJob(t, plain, "plain", id).Headers; !maps.Equal(got, own) {
				t.Errorf("stored headers = %v, want the job's own %v", got, own)
			}
			if got := workertest.GetJob(t, plain, "plain", bare).Headers; len(got) != 0 {
				t.Errorf("a job without headers got %v", got)
			}
		})
	})
}
