package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Producer enqueues jobs of one queue whose payload is a T encoded as
// JSON, the producing side of JSONHandler[T]: both use encoding/json, so
// the handler receives the value sent, as far as encoding/json round-trips
// it. When T has a method Kind() string, every job gets that kind
// (JobSpec.Kind), and Register holds a JSONHandler[T] to the same kind in
// a Kinds. It is safe for concurrent use.
type Producer[T any] struct {
	c     *Client
	queue string
	kind  string // T's Kind(), "" when T has none
}

// NewProducer returns a Producer of queue on c. It does not check queue
// or T's kind: a bad one is reported by each enqueue, as Client.Enqueue
// reports it.
func NewProducer[T any](c *Client, queue string) *Producer[T] {
	kind, _ := kindOf[T]()
	return &Producer[T]{c: c, queue: queue, kind: kind}
}

// kinded is a payload type that names its jobs' kind, as River's job
// arguments do.
type kinded interface{ Kind() string }

// kindOf returns the kind a T names through its method Kind() string, called
// on T's zero value (on a pointer to a new zero value when T is a pointer),
// and whether T has one.
func kindOf[T any]() (string, bool) {
	var v T
	if k, ok := any(v).(kinded); ok {
		if t := reflect.TypeFor[T](); t.Kind() == reflect.Pointer {
			k = reflect.New(t.Elem()).Interface().(kinded)
		}
		return k.Kind(), true
	}
	return "", false
}

// Enqueue adds one job with v as its payload to p's queue, to run now,
// and returns its id, as Client.Enqueue does.
func (p *Producer[T]) Enqueue(ctx context.Context, v T) (string, error) {
	return p.EnqueueSpec(ctx, v, JobSpec{})
}

// EnqueueSpec adds one job with v as its payload and the other settings of
// spec (ID, Delay, RunAt, Priority, UniqueKey, …), as Client.Enqueue does.
// The Producer sets spec.Queue and spec.Payload: a spec with another Queue
// or with a Payload is refused with a *ValidationError naming the field.
func (p *Producer[T]) EnqueueSpec(ctx context.Context, v T, spec JobSpec) (string, error) {
	if err := p.check(&spec); err != nil {
		return "", err
	}
	payload, err := p.encode(v)
	if err != nil {
		return "", err
	}
	spec.Queue, spec.Payload, spec.Kind = p.queue, payload, p.kindOr(spec.Kind)
	return p.c.Enqueue(ctx, spec)
}

// EnqueueMany adds one job per value of vs to p's queue, to run now, as
// Client.EnqueueMany does: the results are in the order of vs. When a value
// does not encode, or a job is invalid, nothing is written and the error
// names the value ("vs[3]").
func (p *Producer[T]) EnqueueMany(ctx context.Context, vs []T) ([]EnqueueResult, error) {
	if p.c == nil {
		return nil, errNilClient
	}
	specs := make([]JobSpec, len(vs))
	for i, v := range vs {
		payload, err := p.encode(v)
		if err != nil {
			return nil, fmt.Errorf("vs[%d]: %w", i, err)
		}
		specs[i] = JobSpec{Queue: p.queue, Kind: p.kind, Payload: payload}
	}
	res, err := p.c.EnqueueMany(ctx, specs)
	var ve *ValidationError
	if errors.As(err, &ve) {
		// Client names the specs it was given; the caller gave values.
		if rest, ok := strings.CutPrefix(ve.Field, "specs["); ok {
			ve.Field = "vs[" + rest
		}
	}
	return res, err
}

var errNilClient = errors.New("worker: Producer has a nil Client")

// check refuses the fields of spec that the Producer sets.
func (p *Producer[T]) check(spec *JobSpec) error {
	switch {
	case p.c == nil:
		return errNilClient
	case spec.Queue != "" && spec.Queue != p.queue:
		return invalid("Queue", "is the Producer's, %q; leave it empty (got %q)", p.queue, spec.Queue)
	case spec.Payload != nil:
		return invalid("Payload", "is the Producer's encoding of the value; leave it nil (got %d bytes)", len(spec.Payload))
	case p.kind != "" && spec.Kind != "" && spec.Kind != p.kind:
		return invalid("Kind", "is the Producer's, %q (the Kind() of %s); leave it empty (got %q)", p.kind, reflect.TypeFor[T](), spec.Kind)
	}
	return nil
}

// kindOr is the kind of a job of p: T's, else the spec's own.
func (p *Producer[T]) kindOr(kind string) string {
	if p.kind != "" {
		return p.kind
	}
	return kind
}

// encode is the payload of v: its JSON, exactly what JSONHandler[T]
// decodes.
func (p *Producer[T]) encode(v T) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("queue %q: encode %s as JSON: %w", p.queue, reflect.TypeFor[T](), err)
	}
	return b, nil
}
