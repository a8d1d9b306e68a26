package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Courier's spans follow the OpenTelemetry messaging conventions: an
// enqueue call is a PRODUCER span "send <queue>", each attempt of a job a
// CONSUMER span "process <queue>", with messaging.system "courier",
// messaging.destination.name the queue (never a partition) and
// messaging.message.id the job's id.
//
// The consumer span of an attempt is a child of the producer span, not a
// span linked to it. A job is one logical operation, started by whoever
// enqueued it: with parents, the enqueue and every attempt of the job are
// one trace, each attempt a sibling child of the enqueue, so a trace
// viewer shows a job's retries under the request that made it. The
// conventions ask for links where a consumer span covers several messages
// received together, which cannot all be its parent; a Courier attempt
// runs exactly one job, and the conventions allow the parent for one
// message. The price: a job retried over hours makes a trace as long.
//
// The trace context travels in the job's headers, W3C Trace Context only
// (traceparent, tracestate), and nothing here touches OpenTelemetry's
// global state: the TracerProvider is Config's, the propagator fixed.

// tracerName is the instrumentation scope of Courier's spans.
const tracerName = "github.com/seed-53d105c9/courier/worker"

// Attributes of Courier's own.
const (
	attrAttempt = attribute.Key("courier.job.attempt") // the attempt a consumer span runs, from 1
	attrOutcome = attribute.Key("courier.job.outcome") // success, retry, snooze or dead
	attrKind    = attribute.Key("courier.job.kind")    // the job's kind (JobSpec.Kind), when it has one
	// attrSkipped counts the jobs of a producer span that got no trace
	// context: their own headers left no room for it.
	attrSkipped = attribute.Key("courier.trace_context.skipped")
)

// Attribute values every span of a kind shares, made once.
var (
	attrSystem    = semconv.MessagingSystemKey.String("courier")
	attrOpSend    = semconv.MessagingOperationName("send")
	attrOpProcess = semconv.MessagingOperationName("process")
)

// traceHeaders is the propagator of the trace context in job headers.
var traceHeaders propagation.TraceContext

// tracer makes Courier's spans (see docs/monitoring.md, "Tracing"). A nil
// *tracer, what Config.TracerProvider nil gives, does nothing: no span, no
// header, no allocation.
type tracer struct {
	t trace.Tracer
}

// newTracer returns the tracer of tp; nil for a nil tp.
func newTracer(tp trace.TracerProvider) *tracer {
	if tp == nil {
		return nil
	}
	return &tracer{t: tp.Tracer(tracerName, trace.WithSchemaURL(semconv.SchemaURL))}
}

// noSent is send's end when there is no span.
func noSent([]EnqueueResult, error) {}

// send starts the producer span of one enqueue call of specs, and writes
// its trace context (traceparent, tracestate) into the headers of each of
// jobs (a copy of the spec's map). end is called with the call's results
// and error.
func (t *tracer) send(ctx context.Context, specs []JobSpec, jobs []store.NewJob) (context.Context, func(results []EnqueueResult, err error)) {
	if t == nil || len(specs) == 0 {
		return ctx, noSent
	}
	name := "send"
	attrs := make([]attribute.KeyValue, 0, 6)
	attrs = append(attrs, attrSystem, semconv.MessagingOperationTypeSend, attrOpSend)
	if q, ok := oneQueue(specs); ok {
		// The conventions name a span by its operation alone when its
		// messages go to several destinations.
		name += " " + q
		attrs = append(attrs, semconv.MessagingDestinationName(q))
	}
	if k := oneKind(specs); k != "" {
		attrs = append(attrs, attrKind.String(k))
	}
	firstID := jobs[0].ID // the enqueue may change it (placeID)
	if len(jobs) == 1 {
		attrs = append(attrs, semconv.MessagingMessageID(firstID))
	} else {
		attrs = append(attrs, semconv.MessagingBatchMessageCount(len(jobs)))
	}
	ctx, span := t.t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(attrs...))
	injectTrace(ctx, span, jobs)
	return ctx, func(results []EnqueueResult, err error) {
		if len(results) == 1 && results[0].ID != firstID {
			// The id the job got in the end: placed in its unique key's
			// partition, or the holder of its unique key.
			span.SetAttributes(semconv.MessagingMessageID(results[0].ID))
		}
		for i := range results {
			if results[i].Err != nil {
				// Not the call's failure: a duplicate, or a job not
				// confirmed on replicas. Worth seeing on the span.
				span.RecordError(results[i].Err, trace.WithAttributes(semconv.MessagingMessageID(results[i].ID)))
			}
		}
		if err != nil {
			failSpan(span, err, errorText(err))
		}
		span.End()
	}
}

// oneQueue returns the queue of specs when they all go to one.
func oneQueue(specs []JobSpec) (string, bool) {
	q := specs[0].Queue
	for i := range specs {
		if specs[i].Queue != q {
			return "", false
		}
	}
	return q, true
}

// oneKind returns the kind of specs when they all have one kind, else "".
func oneKind(specs []JobSpec) string {
	k := specs[0].Kind
	for i := range specs {
		if specs[i].Kind != k {
			return ""
		}
	}
	return k
}

// injectTrace gives each of jobs the trace context of ctx in a copy of
// its headers. A job whose own headers leave no room for the trace
// context under the limits (MaxHeaders, MaxHeadersSize) keeps them as
// they are, without tracestate first and then without the trace context
// at all: the enqueue never fails for tracing. span records each such
// job. A traceparent or tracestate of the caller's own is replaced: the
// producer span is the attempts' parent.
func injectTrace(ctx context.Context, span trace.Span, jobs []store.NewJob) {
	tc := make(propagation.MapCarrier, 2)
	traceHeaders.Inject(ctx, tc)
	if len(tc) == 0 {
		return // no valid span context, as under a no-op TracerProvider
	}
	parentOnly := propagation.MapCarrier{"traceparent": tc["traceparent"]}
	skipped := 0
	for i := range jobs {
		h, add := jobs[i].Headers, tc
		if why := roomFor(h, add); why != "" {
			if _, ok := tc["tracestate"]; !ok || roomFor(h, parentOnly) != "" {
				skipped++
				span.AddEvent("courier.trace_context.skipped", trace.WithAttributes(
					semconv.MessagingMessageID(jobs[i].ID), attribute.String("reason", why)))
				continue
			}
			add = parentOnly
			span.AddEvent("courier.trace_context.tracestate_dropped", trace.WithAttributes(
				semconv.MessagingMessageID(jobs[i].ID), attribute.String("reason", why)))
		}
		m := make(map[string]string, len(h)+len(add))
		maps.Copy(m, h)
		maps.Copy(m, add)
		jobs[i].Headers = m
	}
	if skipped > 0 {
		span.SetAttributes(attrSkipped.Int(skipped))
	}
}

// roomFor says why headers h, which passed validateHeaders, would break
// the limits with add set in them; "" when they would not.
func roomFor(h, add map[string]string) string {
	n, size := len(h), 0
	for name, v := range h {
		size += len(name) + len(v)
	}
	for name, v := range add {
		if len(v) > MaxHeaderValueLen {
			return fmt.Sprintf("%s is %d bytes long; the limit is %d", name, len(v), MaxHeaderValueLen)
		}
		if old, ok := h[name]; ok {
			size -= len(name) + len(old)
		} else {
			n++
		}
		size += len(name) + len(v)
	}
	switch {
	case n > MaxHeaders:
		return fmt.Sprintf("the job's headers and the trace context are %d headers; the limit is %d", n, MaxHeaders)
	case size > MaxHeadersSize:
		return fmt.Sprintf("the job's headers and the trace context are %d bytes; the limit is %d", size, MaxHeadersSize)
	}
	return ""
}

// noProcessed is process's end when there is no span.
func noProcessed(pool.Outcome, error) {}

// process starts the consumer span of one attempt of job, parented on the
// trace context in its headers; the returned context carries it to the
// handler. end is called with the attempt's outcome and the handler's
// error (nil on success).
func (t *tracer) process(ctx context.Context, job *Job) (context.Context, func(o pool.Outcome, err error)) {
	if t == nil {
		return ctx, noProcessed
	}
	// Without a traceparent (a job enqueued untraced) the attempt is a
	// trace of its own.
	parent := traceHeaders.Extract(ctx, propagation.MapCarrier(job.Headers))
	ctx, span := t.t.Start(parent, "process "+job.Queue, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(
		attrSystem, semconv.MessagingOperationTypeProcess, attrOpProcess,
		semconv.MessagingDestinationName(job.Queue), semconv.MessagingMessageID(job.ID),
		attrAttempt.Int(job.Attempt)))
	if job.Kind != "" {
		span.SetAttributes(attrKind.String(job.Kind))
	}
	return ctx, func(o pool.Outcome, err error) {
		span.SetAttributes(attrOutcome.String(string(o.Kind.Result())))
		switch {
		case o.Kind == pool.Retry || o.Kind == pool.Dead:
			failSpan(span, err, o.Err)
		case err != nil && !isSnooze(err):
			// Cut short (shutdown, lease lost) and handed back without
			// spending an attempt: not a failure of the job.
			span.RecordError(err)
		}
		span.End()
	}
}

func isSnooze(err error) bool {
	var s *SnoozeError
	return errors.As(err, &s)
}

// failSpan marks span failed by err: status Error with text (the error as
// stored with the job, cut to a bound), error.type, and the exception
// event.
func failSpan(span trace.Span, err error, text string) {
	if err == nil {
		return
	}
	if text == "" {
		text = errorText(err)
	}
	span.RecordError(err)
	span.SetStatus(codes.Error, text)
	span.SetAttributes(semconv.ErrorTypeKey.String(errorType(err)))
}

// errorType is error.type's value: low-cardinality words for the failures
// Courier tells apart (timeout, cancelled, panic), else the type of the
// error (of a permanent error's cause), or what its ErrorType() string
// method says.
func errorType(err error) string {
	var p *PanicError
	var perm *PermanentError
	switch {
	case errors.Is(err, ErrJobTimeout):
		return "timeout"
	case errors.Is(err, ErrCancelled):
		return "cancelled"
	case errors.As(err, &p):
		return "panic"
	case errors.As(err, &perm) && perm.Err != nil:
		err = perm.Err
	}
	return semconv.ErrorType(err).Value.AsString()
}
