package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
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

// Kinds is the Handler of a queue that serves several kinds of job, like
// a mux: it runs each job with the handler of its Kind (JobSpec.Kind);
// the key "" serves jobs enqueued without one. A job of a kind it has no
// handler for fails permanently with an error naming the kind. Register
// checks every name and handler.
type Kinds map[string]Handler

// Handle runs job with the handler of its kind.
func (k Kinds) Handle(ctx context.Context, job *Job) error {
	if h, ok := k[job.Kind]; ok {
		return h.Handle(ctx, job)
	}
	return Permanent(fmt.Errorf("queue %q has no handler for kind %q in this process (it serves %s)", job.Queue, job.Kind, k.names()))
}

// names lists k's kinds for an error, sorted, "" written as (none).
func (k Kinds) names() string {
	names := slices.Sorted(maps.Keys(k))
	for i, n := range names {
		names[i] = strconv.Quote(n)
		if n == "" {
			names[i] = `"" (jobs without a kind)`
		}
	}
	return strings.Join(names, ", ")
}

// validate checks k's names and handlers, for Register.
func (k Kinds) validate() error {
	if len(k) == 0 {
		return invalid("Handler", "is an empty Kinds")
	}
	for _, kind := range slices.Sorted(maps.Keys(k)) {
		if kind != "" {
			if err := ValidateKind(kind); err != nil {
				return fmt.Errorf("Kinds: %w", err)
			}
		}
		if f, isFunc := k[kind].(HandlerFunc); k[kind] == nil || isFunc && f == nil {
			return invalid("Handler", "Kinds[%q] is nil", kind)
		}
	}
	return nil
}
