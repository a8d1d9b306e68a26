package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Durability asks that an enqueue be confirmed on replicas before the
// producer is told the job is stored. The zero value does not wait.
//
// The enqueue is followed, in the same round trip, by Redis's WAIT (with
// AOF, WAITAOF). When fewer replicas confirm within Timeout, the job is
// stored on the master all the same and its result's error is a
// *NotReplicatedError. WAIT is not strong consistency: a job confirmed on
// n replicas survives a failover to one of them; others may not.
type Durability struct {
	// Replicas is how many replicas must confirm the write (Redis WAIT);
	// 0 waits for none. At most 16.
	Replicas int
	// Timeout bounds the wait for the replicas: required when Replicas or
	// AOF is set, 1ms to 1m.
	Timeout time.Duration
	// AOF also asks the master, and the replicas, to have written the job
	// to their append-only file (WAITAOF, Redis 7.2 and later; the master
	// needs appendonly yes). On an older server the enqueue fails, with
	// nothing stored, and its error names Durability.AOF.
	AOF bool
}

// Bounds of a Durability.
const (
	durabilityReplicasMax = 16
	durabilityTimeoutMax  = time.Minute
)

// waits reports whether d asks for a confirmation.
func (d Durability) waits() bool { return d.Replicas > 0 || d.AOF }

// Validate checks d, naming a bad field ("Timeout"), for programs that
// take a Durability from elsewhere (a request, a flag); EnqueueMany and
// NewClient check every Durability they are given.
func (d Durability) Validate() error {
	switch {
	case d.Replicas < 0 || d.Replicas > durabilityReplicasMax:
		return invalid("Replicas", "must be 0 to %d (got %d)", durabilityReplicasMax, d.Replicas)
	case d.Timeout < 0:
		return invalid("Timeout", "must not be negative (got %s)", d.Timeout)
	case d.waits() && d.Timeout == 0:
		return invalid("Timeout", "is required to wait for replicas or the append-only file: how long to wait, 1ms to %s", durabilityTimeoutMax)
	case !d.waits() && d.Timeout != 0:
		return invalid("Timeout", "is set, but nothing waits: ask for replicas, or the append-only file")
	case d.Timeout > 0 && d.Timeout < time.Millisecond:
		return invalid("Timeout", "must be at least 1ms (got %s)", d.Timeout)
	case d.Timeout > durabilityTimeoutMax:
		return invalid("Timeout", "must be at most %s (got %s)", durabilityTimeoutMax, d.Timeout)
	}
	return nil
}

// validate is Validate with the fields put under field ("Durability",
// `Durability["emails"]`).
func (d Durability) validate(field string) error {
	if err := d.Validate(); err != nil {
		return within(field, err)
	}
	return nil
}

// validateDurabilities checks the Durability of each queue of m (a
// Config.Durability): its key must be a valid queue name; fields are named
// `Durability["emails"].Timeout`.
func validateDurabilities(m map[string]Durability) error {
	var errs []error
	for _, q := range slices.Sorted(maps.Keys(m)) {
		field := fmt.Sprintf("Durability[%q]", q)
		var ve *ValidationError
		if err := ValidateQueueName(q); errors.As(err, &ve) {
			errs = append(errs, invalid(field, "is not a valid queue name: %s", ve.Reason))
			continue
		}
		if err := m[q].validate(field); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// NotReplicatedError reports an enqueue stored on the master but not
// confirmed as its Durability asked in time (ErrNotReplicated): the job
// exists, and enqueueing it again under its id reports ErrDuplicate.
type NotReplicatedError struct {
	Queue string
	// Want is the replicas asked for (Durability.Replicas), Got how many
	// confirmed in time.
	Want, Got int
	// AOF: the confirmation asked for was of the append-only files
	// (WAITAOF); Local then says whether the master wrote its own.
	AOF, Local bool
	// Timeout is the wait that ran out.
	Timeout time.Duration
	// Err is why no answer came (a lost connection, WAITAOF refused…);
	// nil when the wait answered too few.
	Err error
}

// Error implements error.
func (e *NotReplicatedError) Error() string {
	const risk = "; the job may not survive a failover"
	if e.Err != nil {
		return fmt.Sprintf("queue %q: enqueue stored on the master but not confirmed on replicas: %v%s", e.Queue, e.Err, risk)
	}
	if e.AOF {
		local := "the master's"
		if !e.Local {
			local = "not the master's"
		}
		return fmt.Sprintf("queue %q: enqueue stored on the master but written to the append-only file of %d of %d replicas (and %s) within %s%s",
			e.Queue, e.Got, e.Want, local, e.Timeout, risk)
	}
	return fmt.Sprintf("queue %q: enqueue stored on the master but confirmed on %d of %d replicas within %s%s", e.Queue, e.Got, e.Want, e.Timeout, risk)
}

// Is makes errors.Is(err, ErrNotReplicated) true.
func (e *NotReplicatedError) Is(target error) bool { return target == ErrNotReplicated }

// Unwrap returns Err.
func (e *NotReplicatedError) Unwrap() error { return e.Err }

// enqueueTo writes jobs of queue to its partition (the physical queue
// name), confirming them on replicas as d asks (d is resolved: the spec's
// own, else the Client's default for queue). Its contract with
// EnqueueMany: the flags are EnqueueJobs's; a non-nil error with flags for
// every job that is a *NotReplicatedError means the jobs were written but
// not confirmed (each added job's result Err is set to it; duplicates keep
// theirs); any other error is the enqueue's own. A server without WAITAOF,
// asked for AOF, is a *ValidationError on Durability.AOF, nothing written.
func (c *Client) enqueueTo(ctx context.Context, queue string, to store.Target, jobs []store.NewJob, d Durability) ([]store.Enqueued, error) {
	if !d.waits() {
		return c.core.St.EnqueueJobs(ctx, to, jobs)
	}
	start := time.Now()
	added, conf, err := c.core.St.EnqueueConfirmed(ctx, to, jobs, d.Replicas, d.Timeout, d.AOF)
	var noAOF *store.NoWaitAOFError
	switch {
	case errors.As(err, &noAOF):
		return nil, invalid("Durability.AOF", "%s", noAOF.Error())
	case err != nil:
		return added, err
	}
	short := conf.Err != nil || conf.Replicas < d.Replicas || (d.AOF && !conf.Local)
	unconfirmed := 0
	if short {
		for _, a := range added {
			if a.Added {
				unconfirmed++
			}
		}
	}
	c.metrics.Replication(queue, time.Since(start), unconfirmed)
	if !short {
		return added, nil
	}
	return added, &NotReplicatedError{Queue: queue, Want: d.Replicas, Got: max(conf.Replicas, 0), AOF: d.AOF, Local: conf.Local,
		Timeout: d.Timeout, Err: conf.Err}
}
