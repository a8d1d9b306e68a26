package worker

import (
	"time"

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
	// LeaseUntil is the lease deadline of an active job (from Get and
	// List).
	LeaseUntil time.Time
	// StartedAt is when the running attempt of an active job was claimed,
	// by the Redis clock, to the µs: the attempt's claim token, handed out
	// by the claim, so it can be a few µs later than the claim itself. Set
	// for active jobs (Get, List) and for a handler; zero otherwise, and
	// for jobs claimed by versions before the claim token was a time.
	StartedAt time.Time
	// Worker is the id of the process running an active job (Daemon.ID):
	// set by Get and List, and for a handler its own Daemon's; "" when the
	// job is not active or was claimed by a version that did not record it.
	Worker string
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
	// Headers are the job's headers as enqueued (JobSpec.Headers), with
	// the trace context a traced producer added; nil when it has none.
	// Kept across retries and requeues. A handler must not change them.
	Headers map[string]string
	// Progress is what the running attempt of an active job last
	// reported (Job.ReportProgress), as stored with its lease (Get, List);
	// nil when it reported none.
	Progress *Progress
	// Result is what the handler of a completed job set (Job.SetResult);
	// FinishedAt is when it was acked, by the Redis clock. Both are set
	// for completed jobs only (Get, List).
	Result     []byte
	FinishedAt time.Time

	// run is a handler's handle on its running attempt, the zero Run on a
	// Job read by Get or List; maxResult is Config.MaxResultBytes.
	run       pool.Run
	maxResult int
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
		StartedAt:         startedAt(r.Claim),
		Worker:            r.Worker,
		Headers:           r.Headers,
		Progress:          progressOf(r.Progress),
		Result:            r.Result,
	}
}

// timeTokens is the smallest claim token that is a time: tokens of
// versions before the state hash came from a counter, below it (see
// lua/record.lua, OLD_TOKEN); later ones are the Redis clock in µs.
const timeTokens = 1e15

// startedAt returns when the attempt with claim token claim was claimed;
// zero when the job is not active (claim 0) or the token is not a time.
func startedAt(claim int64) time.Time {
	if claim < timeTokens {
		return time.Time{}
	}
	return time.UnixMicro(claim)
}
