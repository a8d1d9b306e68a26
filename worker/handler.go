package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
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

// Defaults of QueueOptions.
const (
	ConcurrencyDefault = 10
	MaxAttemptsDefault = 25
	TimeoutDefault     = 30 * time.Minute
)

// QueueOptions tune how a queue's jobs run; zero values take the defaults.
type QueueOptions struct {
	// Concurrency is how many jobs of the queue run at once in this process.
	// Default 10.
	Concurrency int
	// MaxAttempts applies to jobs enqueued without their own. Default 25.
	MaxAttempts int
	// Backoff decides the wait before a retry. Default ExponentialBackoff{}
	// (full jitter, 5s base, 6h cap).
	Backoff RetryPolicy
	// Timeout applies to jobs enqueued without their own: the handler's
	// context ends after it. Default 30m.
	Timeout time.Duration
	// RateLimit caps how many of the queue's jobs start per window, across
	// every process serving the queue. Default: no limit.
	RateLimit RateLimit
	// Periodic lists jobs the queue's leader enqueues on a schedule.
	// Default: none.
	Periodic []Periodic
}

// RateLimit caps how fast a queue's jobs start: at most N jobs are claimed,
// by every process serving the queue together, in any window of length Per
// (a sliding window: any Per, not calendar seconds or minutes). Jobs beyond
// it stay due until the window allows them; the claim script enforces it
// in Redis, on the Redis clock. The zero RateLimit means no limit.
type RateLimit struct {
	N   int           // 1 to 1,000,000
	Per time.Duration // whole milliseconds, 1ms to 366 days
}

// String returns the limit as "N per Per", e.g. "100 per 1s"; "" for none.
func (r RateLimit) String() string {
	if r == (RateLimit{}) {
		return ""
	}
	return strconv.Itoa(r.N) + " per " + r.Per.String()
}

func (r RateLimit) validate() error {
	switch {
	case r == (RateLimit{}):
		return nil
	case r.N < 1:
		return invalid("rate_limit", "must allow at least 1 job per window (got %d)", r.N)
	case r.N > store.MaxRateN:
		return invalid("rate_limit", "must allow at most %d jobs per window (got %d)", store.MaxRateN, r.N)
	case r.Per < time.Millisecond:
		return invalid("rate_limit", "window must be at least 1ms (got %s)", r.Per)
	case r.Per > store.MaxRatePer:
		return invalid("rate_limit", "window must be at most %s (got %s)", store.MaxRatePer, r.Per)
	case r.Per%time.Millisecond != 0:
		return invalid("rate_limit", "window must be whole milliseconds (got %s)", r.Per)
	}
	return nil
}

func (o QueueOptions) withDefaults() QueueOptions {
	if o.Concurrency == 0 {
		o.Concurrency = ConcurrencyDefault
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = MaxAttemptsDefault
	}
	if o.Backoff == nil {
		o.Backoff = ExponentialBackoff{}
	}
	if o.Timeout == 0 {
		o.Timeout = TimeoutDefault
	}
	return o
}

// Validate reports the first invalid field of o, defaults applied, as a
// *ValidationError naming it (concurrency, max_attempts, timeout,
// rate_limit).
func (o QueueOptions) Validate() error { return o.withDefaults().validate() }

func (o QueueOptions) validate() error {
	switch {
	case o.Concurrency < 1:
		return invalid("concurrency", "must be at least 1 (got %d)", o.Concurrency)
	case o.Concurrency > 10000:
		return invalid("concurrency", "must be at most 10000 (got %d)", o.Concurrency)
	case o.MaxAttempts < 1:
		return invalid("max_attempts", "must be at least 1 (got %d)", o.MaxAttempts)
	case o.Timeout < time.Millisecond:
		return invalid("timeout", "must be at least 1ms (got %s)", o.Timeout)
	}
	names := map[string]bool{}
	for _, p := range o.Periodic {
		if _, err := p.schedule(); err != nil {
			return err
		}
		if names[p.Name] {
			return invalid("periodic.name", "%q is used twice", p.Name)
		}
		names[p.Name] = true
	}
	return o.RateLimit.validate()
}

// Registry maps queue names to their handlers and options. Build one in
// main, register every handler, and pass it to NewDaemon.
type Registry struct {
	mu     sync.Mutex
	queues map[string]registration
}

type registration struct {
	handler Handler
	opts    QueueOptions
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry { return &Registry{queues: make(map[string]registration)} }

// Register sets the handler of queue. It fails on an invalid queue name or
// options, a nil handler, or a queue registered already.
func (r *Registry) Register(queue string, h Handler, opts QueueOptions) error {
	if err := ValidateQueueName(queue); err != nil {
		return fmt.Errorf("register queue %q: %w", queue, err)
	}
	if f, isFunc := h.(HandlerFunc); h == nil || isFunc && f == nil {
		return fmt.Errorf("register queue %q: %w", queue, invalid("handler", "is nil"))
	}
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return fmt.Errorf("register queue %q: %w", queue, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.queues[queue]; dup {
		return fmt.Errorf("register queue %q: %w", queue, invalid("queue", "%q has a handler already", queue))
	}
	r.queues[queue] = registration{handler: h, opts: opts}
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
