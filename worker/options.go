package worker

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

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
	// PriorityWeights share each claim among the priority levels that have
	// jobs due, so lower levels do not starve. Default: strict priority.
	PriorityWeights PriorityWeights
	// IDRetention keeps a caller-supplied job id (JobSpec.ID) refused for
	// this long after its job finished, so a producer retrying later never
	// runs the job twice; like Partitions, give every process the same. At
	// most one year. Default 0.
	IDRetention time.Duration
	// Partitions splits the queue into this many partitions, each in its
	// own hash slot, so one queue spreads over the masters of a Redis
	// Cluster (docs/scaling.md); they share Concurrency, RateLimit and the
	// dead set's bounds, and each is led on its own. Processes serving the
	// queue store the number in Redis at start, where producers read it:
	// give every process the same. 1 to MaxPartitions (64); default 1.
	Partitions int
	// RetainCompleted keeps the queue's finished jobs, with their results
	// (Job.SetResult) and finish times, in the completed state, where Get
	// and the operator's tools show them; the leader deletes the oldest
	// beyond its bounds. A retained job's id stays taken until then.
	// Default: off, finished jobs are deleted at once.
	RetainCompleted Retention
	// KeyConcurrency caps how many jobs of one key (JobSpec.Key) run at
	// once, across every process and partition serving the queue; a
	// key's own cap, set at run time (admin.Client.SetKeyLimits), replaces
	// it. Jobs without a key are not capped. Like Partitions, give every
	// process the same. 0 to MaxKeyConcurrency; default 0, no cap.
	KeyConcurrency int
	// KeyRateLimit caps how many jobs of one key start per window, across
	// every process (exact, a sliding window like RateLimit's); a key's
	// own limit, set at run time (admin.Client.SetKeyLimits), replaces it.
	// Default: no limit.
	KeyRateLimit RateLimit
}

// MaxKeyConcurrency bounds QueueOptions.KeyConcurrency and a key's own cap.
const MaxKeyConcurrency = store.MaxKeyCap

// Retention bounds the completed jobs a queue keeps
// (QueueOptions.RetainCompleted).
type Retention struct {
	// Count is how many completed jobs the queue keeps at most, across its
	// partitions; 0 turns retention off. At most MaxRetainCompleted.
	Count int
	// Age is how long a completed job is kept after it finished; 0 means
	// no age bound (Count alone). Needs Count.
	Age time.Duration
}

// MaxRetainCompleted bounds Retention.Count.
const MaxRetainCompleted = 10_000_000

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
	if o.Partitions == 0 {
		o.Partitions = 1
	}
	return o
}

// Validate reports every invalid field of o, defaults applied: each a
// *ValidationError naming the Go field (Concurrency, MaxAttempts, Timeout,
// RateLimit, Periodic[i].Name, …), joined with errors.Join.
func (o QueueOptions) Validate() error { return o.withDefaults().validate() }

// maxConcurrency bounds QueueOptions.Concurrency.
const maxConcurrency = 10000

func (o QueueOptions) validate() error {
	var errs []error
	switch {
	case o.Concurrency < 1:
		errs = append(errs, invalid("Concurrency", "must be at least 1 (got %d)", o.Concurrency))
	case o.Concurrency > maxConcurrency:
		errs = append(errs, invalid("Concurrency", "must be at most %d (got %d)", maxConcurrency, o.Concurrency))
	}
	if o.MaxAttempts < 1 {
		errs = append(errs, invalid("MaxAttempts", "must be at least 1 (got %d)", o.MaxAttempts))
	}
	if o.Timeout < time.Millisecond {
		errs = append(errs, invalid("Timeout", "must be at least 1ms (got %s)", o.Timeout))
	}
	names := map[string]bool{}
	for i, p := range o.Periodic {
		at := fmt.Sprintf("Periodic[%d]", i)
		if _, err := p.schedule(); err != nil {
			errs = append(errs, within(at, err))
		} else if names[p.Name] {
			errs = append(errs, invalid(at+".Name", "%q is used twice", p.Name))
		}
		if p.payloadErr != nil {
			errs = append(errs, invalid(at+".Payload", "%v", p.payloadErr))
		}
		names[p.Name] = true
	}
	if err := o.RateLimit.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.PriorityWeights.validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.KeyRateLimit.validateAs("KeyRateLimit"); err != nil {
		errs = append(errs, err)
	}
	if o.KeyConcurrency < 0 || o.KeyConcurrency > MaxKeyConcurrency {
		errs = append(errs, invalid("KeyConcurrency", "must be 0 to %d (got %d)", MaxKeyConcurrency, o.KeyConcurrency))
	}
	switch {
	case o.IDRetention < 0:
		errs = append(errs, invalid("IDRetention", "must not be negative (got %s)", o.IDRetention))
	case o.IDRetention > MaxUniqueFor:
		errs = append(errs, invalid("IDRetention", "%s is over the limit of %s", o.IDRetention, MaxUniqueFor))
	case o.IDRetention > 0 && o.IDRetention < time.Millisecond:
		errs = append(errs, invalid("IDRetention", "must be at least 1ms (got %s)", o.IDRetention))
	}
	switch {
	case o.Partitions < 1 || o.Partitions > MaxPartitions:
		errs = append(errs, invalid("Partitions", "must be 1 to %d, or 0 for 1 (got %d)", MaxPartitions, o.Partitions))
	case o.RateLimit.N > 0 && o.RateLimit.N < o.Partitions:
		errs = append(errs, invalid("RateLimit", "%s is shared among %d partitions, at least 1 each: allow at least %d per window (a longer window keeps the rate: e.g. %d per %s)",
			o.RateLimit, o.Partitions, o.Partitions, o.RateLimit.N*o.Partitions, o.RateLimit.Per*time.Duration(o.Partitions)))
	}
	return errors.Join(append(errs, o.RetainCompleted.validate()...)...)
}

func (r Retention) validate() []error {
	var errs []error
	if r.Count < 0 || r.Count > MaxRetainCompleted {
		errs = append(errs, invalid("RetainCompleted.Count", "must be 0 to %d (got %d)", MaxRetainCompleted, r.Count))
	}
	switch {
	case r.Age < 0:
		errs = append(errs, invalid("RetainCompleted.Age", "must not be negative (got %s)", r.Age))
	case r.Age > 0 && r.Count == 0:
		errs = append(errs, invalid("RetainCompleted.Age", "needs a count as well, the bound on how many are kept"))
	case r.Age > 0 && r.Age < time.Second:
		errs = append(errs, invalid("RetainCompleted.Age", "must be at least 1s (got %s)", r.Age))
	}
	return errs
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

// rateLimitSyntax is the message for a limit that does not parse.
const rateLimitSyntax = `expected "N per DURATION" such as "100 per 1s" or "5000/1m"`

// ParseRateLimit reads a limit as people write it, and as String writes
// it: "N per DURATION" or "N/DURATION", e.g. "100 per 1s", "5000/1m"; ""
// is no limit. It checks the form only: the numbers are checked where the
// limit is used (QueueOptions.Validate).
func ParseRateLimit(s string) (RateLimit, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return RateLimit{}, nil
	}
	count, window, ok := strings.Cut(text, "/")
	if !ok {
		f := strings.Fields(text)
		if len(f) != 3 || !strings.EqualFold(f[1], "per") {
			return RateLimit{}, fmt.Errorf("%s (got %q)", rateLimitSyntax, s)
		}
		count, window = f[0], f[2]
	}
	count, window = strings.TrimSpace(count), strings.TrimSpace(window)
	n, err := strconv.Atoi(count)
	if err != nil || strings.ContainsAny(count, "+-") {
		return RateLimit{}, fmt.Errorf("%s (got %q: %q is not a whole number)", rateLimitSyntax, s, count)
	}
	per, err := time.ParseDuration(window)
	if err != nil || strings.HasPrefix(window, "-") {
		return RateLimit{}, fmt.Errorf("%s (got %q: %q is not a duration such as 1s, 1m or 500ms)", rateLimitSyntax, s, window)
	}
	return RateLimit{N: n, Per: per}, nil
}

// Validate checks r's numbers (1 to 1,000,000 per a window of whole ms
// from 1ms to 366 days; the zero RateLimit, none, is valid): a
// *ValidationError of field RateLimit, for tools that take a limit outside
// QueueOptions (admin.KeyLimits).
func (r RateLimit) Validate() error { return r.validate() }

func (r RateLimit) validate() error { return r.validateAs("RateLimit") }

func (r RateLimit) validateAs(field string) error {
	switch {
	case r == (RateLimit{}):
		return nil
	case r.N < 1:
		return invalid(field, "must allow at least 1 job per window (got %d)", r.N)
	case r.N > store.MaxRateN:
		return invalid(field, "must allow at most %d jobs per window (got %d)", store.MaxRateN, r.N)
	case r.Per < time.Millisecond:
		return invalid(field, "window must be at least 1ms (got %s)", r.Per)
	case r.Per > store.MaxRatePer:
		return invalid(field, "window must be at most %s (got %s)", store.MaxRatePer, r.Per)
	case r.Per%time.Millisecond != 0:
		return invalid(field, "window must be whole milliseconds (got %s)", r.Per)
	}
	return nil
}
