package worker

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Registry maps queue names to their handlers and options. Build one in
// main, register every handler, and pass it to NewDaemon.
type Registry struct {
	mu         sync.Mutex
	queues     map[string]registration
	middleware []Middleware // Use's, outermost first
}

type registration struct {
	handler Handler
	opts    QueueOptions
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{queues: make(map[string]registration)} }

// Register sets the handler of queue. It fails on an invalid queue name or
// options, a nil handler, a queue registered already, or a periodic
// payload the handler would refuse (a JSONHandler[T]'s: one that does not
// decode into a T, or has a field T lacks).
func (r *Registry) Register(queue string, h Handler, opts QueueOptions) error {
	if err := ValidateQueueName(queue); err != nil {
		return fmt.Errorf("register queue %q: %w", queue, err)
	}
	if isNil(h) {
		return fmt.Errorf("register queue %q: %w", queue, invalid("Handler", "is nil"))
	}
	if kinds, ok := h.(Kinds); ok {
		if err := kinds.validate(); err != nil {
			return fmt.Errorf("register queue %q: %w", queue, err)
		}
	}
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return fmt.Errorf("register queue %q: %w", queue, err)
	}
	if err := periodicKinds(h, opts.Periodic); err != nil {
		return fmt.Errorf("register queue %q: %w", queue, err)
	}
	if err := checkPeriodic(h, opts.Periodic); err != nil {
		return fmt.Errorf("register queue %q: %w", queue, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.queues[queue]; dup {
		return fmt.Errorf("register queue %q: %w", queue, invalid("Queue", "%q has a handler already", queue))
	}
	r.queues[queue] = registration{handler: h, opts: opts}
	return nil
}

// periodicKinds checks that h serves the kind of each periodic job of ps:
// a kind needs a Kinds with its key, and so does no kind in a Kinds.
func periodicKinds(h Handler, ps []Periodic) error {
	kinds, isKinds := h.(Kinds)
	for i, p := range ps {
		at := fmt.Sprintf("Periodic[%d].Kind", i)
		switch _, served := kinds[p.Kind]; {
		case !isKinds && p.Kind != "":
			return invalid(at, "is %q, but the queue's handler is not a Kinds: it would run every kind with its one handler", p.Kind)
		case isKinds && !served && p.Kind == "":
			return invalid(at, "is empty, but the queue's Kinds has no handler for jobs without a kind (it serves %s)", kinds.names())
		case isKinds && !served:
			return invalid(at, "is %q, but the queue's Kinds has no handler for it (it serves %s)", p.Kind, kinds.names())
		}
	}
	return nil
}

// Queues returns the registered queue names, sorted.
func (r *Registry) Queues() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	names := make([]string, 0, len(r.queues))
	for q := range r.queues {
		names = append(names, q)
	}
	slices.Sort(names)
	return names
}

func (r *Registry) lookup(queue string) (registration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	reg, ok := r.queues[queue]
	return reg, ok
}

// checkPeriodic checks each periodic payload against h, when h knows the
// payloads it accepts (payloadChecker).
func checkPeriodic(h Handler, ps []Periodic) error {
	kinds, isKinds := h.(Kinds)
	var errs []error
	for i, p := range ps {
		fires := h
		if isKinds {
			fires = kinds[p.Kind] // periodicKinds checked it is there
		}
		c, ok := fires.(payloadChecker)
		if !ok {
			continue
		}
		if err := c.checkPayload(p.Payload); err != nil {
			errs = append(errs, invalid(fmt.Sprintf("Periodic[%d].Payload", i), "%v", err))
		}
	}
	return errors.Join(errs...)
}
