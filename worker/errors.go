package worker

import (
	"errors"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrDuplicate: a job with that id exists; it was left untouched.
	ErrDuplicate = errors.New("job id exists")
	// ErrNotReplicated: the job was stored on the master, but fewer
	// replicas than its Durability asked confirmed it in time; it may or
	// may not survive a failover.
	ErrNotReplicated = errors.New("enqueue not confirmed on replicas")
	// ErrUniqueKeyHeld: another job holds the unique key (JobSpec.UniqueKey);
	// nothing was added. It wraps ErrDuplicate, so errors.Is(err,
	// ErrDuplicate) holds too, and the result's id is the holder's.
	ErrUniqueKeyHeld = fmt.Errorf("unique key held: %w", ErrDuplicate)
	// ErrNotFound: no job with that id in that queue.
	ErrNotFound = errors.New("job not found")
	// ErrJobDead: the job is in the dead set (requeue it, or purge it).
	ErrJobDead = errors.New("job is dead")
	// ErrInvalid: a job, queue name or option is invalid; the error is a
	// *ValidationError naming the field.
	ErrInvalid = errors.New("invalid")
	// ErrJobTimeout is the cause of a handler's context ending at the job's
	// timeout.
	ErrJobTimeout = errors.New("job timed out")
	// ErrShutdown is the cause of a handler's context ending because the
	// daemon stopped and the shutdown timeout passed. The job goes back to
	// due without spending an attempt.
	ErrShutdown = errors.New("courier: shutting down")
	// ErrCancelled is the cause of a handler's context ending because the
	// job was cancelled while it ran (admin.Client.Cancel). The job is in the
	// dead set already, with the last error "cancelled"; whatever the
	// handler returns is ignored.
	ErrCancelled = errors.New("courier: job cancelled")
	// ErrLeaseLost is the cause of a handler's context ending because the
	// job's lease could not be renewed: another worker may run it now.
	ErrLeaseLost = errors.New("courier: job lease lost")
	// ErrRedisOOM: Redis refused an enqueue because it is out of memory
	// (maxmemory reached, and the noeviction policy Courier asks for
	// evicts nothing), and the refused jobs were not stored. Running jobs
	// are not affected: leases, outcomes and leader locks are still
	// written. Free memory in Redis or raise maxmemory, then enqueue
	// again.
	ErrRedisOOM = errors.New("redis is out of memory (maxmemory reached)")
	// ErrUnserved: Config.RefuseUnserved refused an enqueue to a queue, or
	// a kind of a queue, that no daemon has ever served; nothing was
	// stored. The error names the queue and kind.
	ErrUnserved = errors.New("enqueue refused (Config.RefuseUnserved)")
)

// ValidationError reports a bad value. Field names it by its Go name, a
// path from the value validated: "Lease" (Config), "Concurrency"
// (QueueOptions), "Periodic[0].Every", "Queue" and "ID" (JobSpec, and the
// queue and id arguments of Client's methods), "specs[3].Delay"
// (EnqueueMany), "Limit" (admin.JobListParams). Programs that take the value under
// other names (YAML keys, JSON fields) map Field to theirs.
type ValidationError struct {
	Field  string
	Reason string
}

// Error implements error.
func (e *ValidationError) Error() string { return "invalid " + e.Field + ": " + e.Reason }

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// within returns err with the field of its *ValidationError put under
// parent ("Periodic[2]" and "Name" make "Periodic[2].Name"; an empty field
// becomes parent itself).
func within(parent string, err error) error {
	var ve *ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	field := parent
	if ve.Field != "" {
		field += "." + ve.Field
	}
	return &ValidationError{Field: field, Reason: ve.Reason}
}

// PermanentError wraps a handler error that retrying cannot fix.
type PermanentError struct{ Err error }

// Error implements error.
func (e *PermanentError) Error() string { return "permanent: " + e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *PermanentError) Unwrap() error { return e.Err }

// Permanent marks err as final: the job goes to the dead set at once,
// whatever attempts it has left. Permanent(nil) returns nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &PermanentError{Err: err}
}

// SnoozeError asks for the job to run again after Delay without spending an
// attempt.
type SnoozeError struct{ Delay time.Duration }

// Error implements error.
func (e *SnoozeError) Error() string { return fmt.Sprintf("snoozed for %s", e.Delay) }

// Snooze returns an error that puts the job back, due at now+d, without
// spending an attempt: the answer to "the resource I need is busy, try
// later". A negative d counts as zero.
func Snooze(d time.Duration) error { return &SnoozeError{Delay: max(d, 0)} }

// KeyLimitedError asks for the job, and every other job of its key, to
// wait Delay without spending an attempt (KeyLimited).
type KeyLimitedError struct{ Delay time.Duration }

// Error implements error.
func (e *KeyLimitedError) Error() string { return fmt.Sprintf("key limited for %s", e.Delay) }

// MaxKeyLimited is the longest a handler's KeyLimited holds a key back.
const MaxKeyLimited = store.MaxKeyLimited

// KeyLimited returns an error that tells Courier the downstream this job's
// key (Job.Key) stands for takes no more work for d: an API answered 429
// or 503 with Retry-After for this tenant. The job goes back, due at
// now+d, without spending an attempt, and no other job of its key starts
// before then, in any process, while the other keys go on. A limit the key
// already has that ends later is kept. A job without a key is snoozed
// (Snooze). d is capped at MaxKeyLimited (24h); a negative d counts as
// zero. admin.Client.Key shows the limit (KeyStats.LimitedUntil).
func KeyLimited(d time.Duration) error { return &KeyLimitedError{Delay: min(max(d, 0), MaxKeyLimited)} }

// PanicError is a recovered handler panic; it counts as a failed attempt.
type PanicError struct {
	Value any
	Stack []byte
}

// Error implements error.
func (e *PanicError) Error() string { return fmt.Sprintf("handler panic: %v", e.Value) }
