package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
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

// isNil reports whether h is no handler: nil, or a nil HandlerFunc
// (what JSONHandler returns for a nil fn).
func isNil(h Handler) bool {
	f, isFunc := h.(HandlerFunc)
	return h == nil || isFunc && f == nil
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, job *Job) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, job *Job) error { return f(ctx, job) }

// JSONHandler returns a Handler that decodes each job's payload as JSON into
// a T before calling fn. A payload that does not decode fails permanently:
// retrying cannot fix it. Register checks the queue's periodic payloads
// against T (see PeriodicJSON); when T has a method Kind() string (see
// Producer), it refuses the handler in a Kinds under another key.
func JSONHandler[T any](fn func(ctx context.Context, job *Job, payload T) error) Handler {
	if fn == nil {
		return HandlerFunc(nil) // refused by Register
	}
	return jsonHandler[T]{fn: fn}
}

// jsonHandler is JSONHandler's Handler: it knows its payload's type.
type jsonHandler[T any] struct {
	fn func(ctx context.Context, job *Job, payload T) error
}

// Handle decodes the payload and calls fn.
func (h jsonHandler[T]) Handle(ctx context.Context, job *Job) error {
	var v T
	if err := json.Unmarshal(job.Payload, &v); err != nil {
		return Permanent(fmt.Errorf("decode JSON payload into %T: %w", v, err))
	}
	return h.fn(ctx, job, v)
}

// payloadChecker is a Handler that knows the payloads it accepts:
// Register checks each periodic payload of its queue with it, so that a
// payload that would fail on every fire fails at Register instead.
type payloadChecker interface {
	// checkPayload returns why the handler would refuse payload, naming
	// the payload's type; nil if it accepts it.
	checkPayload(payload []byte) error
}

var _ payloadChecker = jsonHandler[struct{}]{}

// checkPayload refuses a payload that does not decode into a T, as Handle
// would, and one with a field T lacks: a periodic payload is written
// beside its handler, so such a field is most likely a typo.
func (h jsonHandler[T]) checkPayload(payload []byte) error {
	var v T
	if err := json.Unmarshal(payload, &v); err != nil {
		return fmt.Errorf("does not decode into %s: %w", reflect.TypeFor[T](), err)
	}
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("does not decode into %s: %w", reflect.TypeFor[T](), err)
	}
	return nil
}

// typedKind reports the kind a typed handler's payload type names (its
// Kind() method), for Register's check of a Kinds.
func (jsonHandler[T]) typedKind() (string, bool) { return kindOf[T]() }

// kindTyped is a Handler whose payload type names a kind: JSONHandler[T].
type kindTyped interface {
	typedKind() (kind string, ok bool)
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
		if isNil(k[kind]) {
			return invalid("Handler", "Kinds[%q] is nil", kind)
		}
		if t, ok := k[kind].(kindTyped); ok {
			if typed, ok := t.typedKind(); ok && typed != kind {
				return invalid("Handler", "Kinds[%q] is a JSONHandler of a payload whose Kind() is %q: its producer's jobs would not reach it; use the key %q", kind, typed, typed)
			}
		}
	}
	return nil
}
