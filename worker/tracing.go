package worker

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// tracer makes Courier's spans (see the README's "Tracing"). A nil
// *tracer, what Config.TracerProvider nil gives, does nothing: no span, no
// header, no allocation.
// TODO(helper T): implement.
type tracer struct {
	t trace.Tracer
}

// newTracer returns the tracer of tp; nil for a nil tp.
func newTracer(tp trace.TracerProvider) *tracer {
	if tp == nil {
		return nil
	}
	return &tracer{t: tp.Tracer("github.com/seed-53d105c9/courier/worker")}
}

// noSent is send's end when there is no span.
func noSent([]EnqueueResult, error) {}

// send starts the producer span of one enqueue call of specs, and writes
// its trace context (traceparent, tracestate) into the headers of each of
// jobs (a copy of the spec's map). end is called with the call's results
// and error.
func (t *tracer) send(ctx context.Context, specs []JobSpec, jobs []store.NewJob) (context.Context, func(results []EnqueueResult, err error)) {
	if t == nil {
		return ctx, noSent
	}
	return ctx, noSent
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
	return ctx, noProcessed
}
