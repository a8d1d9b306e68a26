package worker

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/testhook"
)

// maxErrorText bounds the last error stored with a job.
const maxErrorText = 4096

// execEnv is what every queue's executor shares: the Daemon's logger,
// result limit and tracer.
type execEnv struct {
	log       *slog.Logger
	maxResult int     // Config.MaxResultBytes
	tracer    *tracer // nil without Config.TracerProvider
	// watch, set by the test kit only (testhook.Observe), is told each
	// attempt and its outcome.
	watch testhook.Watch
}

// executor turns a queue's handler into the pool's Exec: it applies the
// timeout, recovers panics, maps the handler's error to an outcome and
// traces the attempt.
func executor(queue string, reg registration, env execEnv) pool.Exec {
	return func(ctx context.Context, rec *store.Record) pool.Outcome {
		job := runningJob(queue, rec, reg.opts)
		job.run, job.maxResult = pool.RunOf(ctx), env.maxResult
		ctx, traced := env.tracer.process(ctx, job)
		if env.watch != nil {
			rec, end := env.watch(job)
			job.run = job.run.Recording(rec)
			traced = both(traced, end)
		}
		ended := false
		defer func() {
			if !ended { // the handler called runtime.Goexit: end its span as the failure it is
				traced(outcome(errGoexit, job, reg.opts), errGoexit)
			}
		}()
		o, err := execute(ctx, reg, job, env.log)
		ended = true
		traced(o, err)
		return o
	}
}

// both calls a, then b.
func both(a, b func(pool.Outcome, error)) func(pool.Outcome, error) {
	return func(o pool.Outcome, err error) { a(o, err); b(o, err) }
}

// execute runs one attempt of job and returns its outcome and the
// handler's error.
func execute(ctx context.Context, reg registration, job *Job, log *slog.Logger) (pool.Outcome, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, job.Timeout, ErrJobTimeout)
	defer cancel()
	err := callHandler(ctx, reg.handler, job)
	if err == nil {
		return pool.Outcome{Kind: pool.Ack}, nil
	}
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, ErrShutdown):
		// Not the job's fault: it goes back without spending an attempt.
		return pool.Outcome{Kind: pool.Snooze}, err
	case errors.Is(cause, ErrLeaseLost):
		// The job is no longer ours (the pool logged why): any write is
		// a no-op, and it is not this attempt's failure to report.
		return pool.Outcome{Kind: pool.Snooze}, err
	case errors.Is(cause, ErrCancelled):
		// Cancelled while it ran: the job is in the cancelled set, its
		// claim gone; the pool writes nothing (metrics outcome
		// "cancelled"). Not a failure: no warning.
		if !errors.Is(err, cause) {
			err = fmt.Errorf("%w (%w)", err, cause)
		}
		log.Info("job cancelled; its handler returned", "queue", job.Queue, "job", job.ID, "attempt", job.Attempt,
			"max_attempts", job.MaxAttempts, "err", err)
		return pool.Outcome{Kind: pool.Snooze}, err
	}
	if cause != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w (%w)", err, cause)
	}
	o := outcome(err, job, reg.opts)
	logOutcome(log, job, err, o)
	return o, err
}

// runningJob is the Job a handler sees: active, with the queue's limits
// where the job has none of its own.
func runningJob(queue string, rec *store.Record, opts QueueOptions) *Job {
	job := jobFromRecord(queue, rec)
	job.State = StateActive
	job.MaxAttempts = cmp.Or(job.MaxAttempts, opts.MaxAttempts)
	job.Timeout = cmp.Or(job.Timeout, opts.Timeout)
	return job
}

// errGoexit reports a handler that ended its goroutine (runtime.Goexit, as
// t.FailNow and log.Fatal-like helpers do) instead of returning.
var errGoexit = errors.New("handler called runtime.Goexit instead of returning")

// callHandler runs h, turning a panic into a *PanicError. A runtime.Goexit
// ends the worker's goroutine; the pool notices, settles the job through
// aborter and starts a new goroutine.
func callHandler(ctx context.Context, h Handler, job *Job) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return h.Handle(ctx, job)
}

// aborter gives the outcome of a job whose handler called runtime.Goexit:
// a failed attempt, like a panic.
func aborter(queue string, reg registration, log *slog.Logger) pool.Abort {
	return func(rec *store.Record) pool.Outcome {
		job := runningJob(queue, rec, reg.opts)
		o := outcome(errGoexit, job, reg.opts)
		logOutcome(log, job, errGoexit, o)
		return o
	}
}

// outcome maps a handler error to what happens to the job.
func outcome(err error, job *Job, opts QueueOptions) pool.Outcome {
	var snooze *SnoozeError
	if errors.As(err, &snooze) {
		return pool.Outcome{Kind: pool.Snooze, Delay: snooze.Delay}
	}
	var limited *KeyLimitedError
	if errors.As(err, &limited) {
		return pool.Outcome{Kind: pool.Snooze, Delay: limited.Delay, LimitKey: job.Key != ""}
	}
	text := errorText(err)
	var perm *PermanentError
	if errors.As(err, &perm) || job.Attempt >= job.MaxAttempts {
		return pool.Outcome{Kind: pool.Dead, Err: text}
	}
	return pool.Outcome{Kind: pool.Retry, Delay: max(opts.Backoff.Delay(job.Attempt), 0), Err: text}
}

func errorText(err error) string {
	s := err.Error()
	if len(s) > maxErrorText {
		i := maxErrorText - 3
		for i > 0 && !utf8.RuneStart(s[i]) {
			i-- // never cut a character in two
		}
		s = s[:i] + "..."
	}
	return s
}

func logOutcome(log *slog.Logger, job *Job, err error, o pool.Outcome) {
	attrs := []any{"queue", job.Queue, "job", job.ID, "attempt", job.Attempt, "max_attempts", job.MaxAttempts}
	var p *PanicError
	if errors.As(err, &p) {
		log.Error("handler panicked", append(attrs, "panic", fmt.Sprint(p.Value), "stack", string(p.Stack))...)
	}
	switch o.Kind {
	case pool.Snooze:
		log.Debug("job snoozed", append(attrs, "delay", o.Delay)...)
	case pool.Dead:
		log.Warn("job failed for good; moved to the dead set", append(attrs, "err", err)...)
	case pool.Retry:
		log.Warn("job failed; will retry", append(attrs, "err", err, "retry_in", o.Delay)...)
	}
}
