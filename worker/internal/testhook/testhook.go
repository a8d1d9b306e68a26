// Package testhook lets package worker/workertest, the test kit users
// write their handlers' tests with, run a handler as a Daemon does and
// watch a Daemon's attempts, without exported names in package worker
// for it. Package worker fills in the functions when it is initialised
// (worker/testhook.go); the values are worker's types, passed as any
// because this package cannot import worker.
//
// Nothing else may call these: they exist for the test kit alone.
package testhook

import (
	"context"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
)

// Attempt is one attempt of a handler that Run runs as a Daemon would.
type Attempt struct {
	Queue   string // the queue the handler is registered for
	Handler any    // worker.Handler
	Options any    // worker.QueueOptions: the queue's limits and backoff, defaults applied
	Config  any    // worker.Config: MaxResultBytes, Logger, TracerProvider, defaults applied
	// Job is the *worker.Job the handler gets; Run sets its State,
	// MaxAttempts and Timeout as a claim does, and makes it running.
	Job any
	// Recorder receives every progress report and result the handler
	// makes.
	Recorder pool.Recorder
}

// Watch is given each attempt a watched Daemon runs, as its handler
// starts: its job (a *worker.Job) and the Recorder that receives its
// reports and result; end is called with the attempt's outcome and the
// handler's error before the outcome is stored.
type Watch func(job any) (rec pool.Recorder, end func(o pool.Outcome, err error))

var (
	// Run runs a.Handler on a.Job as a Daemon's executor does (timeout,
	// panics, the outcome of its error) and returns the outcome and the
	// handler's error; err reports a bad Attempt (invalid options,
	// handler or config).
	Run func(ctx context.Context, a Attempt) (o pool.Outcome, handlerErr, err error)
	// Observe makes a *worker.Daemon call w for each attempt it runs; it
	// must be called before the Daemon's Run.
	Observe func(daemon any, w Watch)
	// ValidateSpec checks a worker.JobSpec against the rules Enqueue
	// applies under cfg (a worker.Config) at now.
	ValidateSpec func(spec, cfg any, now time.Time) error
)
