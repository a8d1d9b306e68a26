package worker

import (
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// State is where a job is in its lifecycle.
type State string

// Job states.
const (
	StateScheduled State = "scheduled" // due later
	StateReady     State = "ready"     // due now, waiting for a free worker
	StateActive    State = "active"    // claimed by a worker, under a lease
	StateDead      State = "dead"      // out of attempts or failed permanently
	// StateCompleted is a finished job its queue retains
	// (QueueOptions.RetainCompleted), with its result.
	StateCompleted State = "completed"
	// StateCancelled is a job cancelled before it started or while it
	// ran (admin.Client.Cancel), kept for requeue until trimmed.
	StateCancelled State = "cancelled"
)

// Job is one job, as a handler receives it or as Client.Get reads it (and
// the operator's listings, admin.Client.Jobs): a read sets the fields of
// the job's state, marked "(read)" below.
type Job struct {
	ID    string
	Queue string
	// Kind is the job's kind as enqueued (JobSpec.Kind); "" for none.
	Kind    string
	Payload []byte
	State   State

	// Attempt is the number of attempts spent, including a running one: a
	// handler sees 1 on the first attempt. Snoozes do not count.
	Attempt int
	// MaxAttempts is the job's own limit; 0 means the queue's. Handlers see
	// the limit in force.
	MaxAttempts int
	// Timeout is the job's own run time limit; 0 means the queue's. Handlers
	// see the limit in force.
	Timeout time.Duration

	EnqueuedAt time.Time
	// RunAt is when the job is or was due: for a handler, the run-at of the
	// attempt it runs; set for scheduled and ready jobs (read).
	RunAt time.Time
	// LeaseUntil is the lease deadline of an active job (read).
	LeaseUntil time.Time
	// StartedAt is when the running attempt was claimed, by the Redis
	// clock, to the µs (its claim token, a few µs after the claim): set for
	// active jobs (read) and for a handler; zero for a job claimed by a
	// version before the claim token was a time.
	StartedAt time.Time
	// Worker is the id of the process running an active job (Daemon.ID;
	// read, and for a handler); "" for a version that did not record it.
	Worker string
	// DiedAt is when a dead job entered the dead set (read).
	DiedAt time.Time
	// LastError is the error of the last failed attempt, if any.
	LastError string
	// Priority is the job's priority level.
	Priority Priority
	// Key is the job's key (JobSpec.Key), "" for none.
	Key string
	// UniqueKey, UniqueFor and UniqueAfterFinish are the job's unique key
	// and window as enqueued (read; a handler's Job leaves them empty: the
	// claim does not read them, to stay fast).
	UniqueKey         string
	UniqueFor         time.Duration
	UniqueAfterFinish bool
	// Headers are the job's headers as enqueued (JobSpec.Headers), with
	// the trace context a traced producer added; nil when it has none.
	// Kept across retries and requeues. A handler must not change them.
	Headers map[string]string
	// Progress is what the running attempt of an active job last reported
	// (Job.ReportProgress; read); nil when it reported none.
	Progress *Progress
	// Result is what the handler of a completed job set (Job.SetResult);
	// FinishedAt is when it was acked, or a cancelled job cancelled, by
	// the Redis clock (read, completed and cancelled jobs only).
	Result     []byte
	FinishedAt time.Time

	// run is a handler's handle on its running attempt, the zero Run on a
	// Job read; maxResult is Config.MaxResultBytes.
	run       pool.Run
	maxResult int
}

// jobFromRecord returns the Job of a record of queue, as Get and a
// handler see it; admin.Client's listings map a record the same way
// (admin's jobOf, held to this one by its tests).
func jobFromRecord(queue string, r *store.Record) *Job {
	kind, headers := core.SplitKind(r.Headers)
	return &Job{
		ID:                r.ID,
		Queue:             queue,
		Kind:              kind,
		Payload:           r.Payload,
		Attempt:           r.Attempt,
		MaxAttempts:       r.MaxAttempts,
		Timeout:           r.Timeout,
		EnqueuedAt:        r.EnqueuedAt,
		RunAt:             r.RunAt,
		LastError:         r.LastError,
		Priority:          Priority(r.Priority),
		Key:               r.Key,
		UniqueKey:         r.Unique.Key,
		UniqueFor:         r.Unique.For,
		UniqueAfterFinish: r.Unique.AfterFinish,
		StartedAt:         core.StartedAt(r.Claim),
		Worker:            r.Worker,
		Headers:           headers,
		Progress:          progressOf(r.Progress),
		Result:            r.Result,
	}
}
