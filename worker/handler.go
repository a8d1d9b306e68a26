package worker

import (
	"context"
	"encoding/json"
	"fmt"
)

// Handler runs the jobs of one queue. Handle returns nil when the job is
// done; an error spends the attempt and schedules a retry (see RetryPolicy),
// unless it is Permanent or Snooze. ctx ends at the job's timeout, when its
// lease is lost and at a hard shutdown: context.Cause(ctx) tells which.
// Delivery is at least once, so Handle should be idempotent.
type Handler interface {
	Handle(ctx context.Context, job *Job) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, job *Job) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, job *Job) error { return f(ctx, job) }

// JSONHandler returns a Handler that decodes each job's payload as JSON into
// a T before calling fn. A payload that does not decode fails permanently:
// retrying cannot fix it.
func JSONHandler[T any](fn func(ctx context.Context, job *Job, payload T) error) Handler {
	if fn == nil {
		return HandlerFunc(nil) // refused by Register
	}
	return HandlerFunc(func(ctx context.Context, job *Job) error {
		var v T
		if err := json.Unmarshal(job.Payload, &v); err != nil {
			return Permanent(fmt.Errorf("decode JSON payload into %T: %w", v, err))
		}
		return fn(ctx, job, v)
	})
}
