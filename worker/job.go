package worker

import (
	"time"

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
)

// Job is one job, as a handler receives it or as Client.Get reads it.
type Job struct {
	ID      string
	Queue   string
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
	// attempt it runs; from Get, set for scheduled and ready jobs.
	RunAt time.Time
	// LeaseUntil is the lease deadline of an active job (from Get).
	LeaseUntil time.Time
	// DiedAt is when a dead job entered the dead set (from Get).
	DiedAt time.Time
	// LastError is the error of the last failed attempt, if any.
	LastError string
	// Priority is the job's priority level.
	Priority Priority
	// UniqueKey, UniqueFor and UniqueAfterFinish are the job's unique key
	// and window as enqueued. Get sets them; a handler's Job leaves them
	// empty (the claim does not read them, to stay fast).
	UniqueKey         string
	UniqueFor         time.Duration
	UniqueAfterFinish bool
}

func jobFromRecord(queue string, r *store.Record) *Job {
	return &Job{
		ID:                r.ID,
		Queue:             queue,
		Payload:           r.Payload,
		Attempt:           r.Attempt,
		MaxAttempts:       r.MaxAttempts,
		Timeout:           r.Timeout,
		EnqueuedAt:        r.EnqueuedAt,
		RunAt:             r.RunAt,
		LastError:         r.LastError,
		Priority:          Priority(r.Priority),
		UniqueKey:         r.Unique.Key,
		UniqueFor:         r.Unique.For,
		UniqueAfterFinish: r.Unique.AfterFinish,
	}
}
