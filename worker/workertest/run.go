package workertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/testhook"
)

// Outcome is what a Daemon does with a job after one attempt, decided
// from the handler's error as the daemon decides it.
type Outcome string

// The outcomes of an attempt.
const (
	// Done: the handler returned nil; the job is acked (and kept with its
	// result by a queue that retains completed jobs).
	Done Outcome = "done"
	// Retried: the handler failed (an error, a panic, its timeout) with
	// attempts left; the job runs again after Attempt.Delay, the backoff.
	Retried Outcome = "retried"
	// Dead: the handler failed permanently (worker.Permanent) or on its
	// last attempt; the job goes to the dead set.
	Dead Outcome = "dead"
	// Snoozed: the handler returned worker.Snooze; the job runs again
	// after Attempt.Delay without spending an attempt.
	Snoozed Outcome = "snoozed"
)

// Attempt is what one attempt of a handler did, for a test to check: Run
// returns one, and Drained lists those a Daemon ran.
type Attempt struct {
	// Job is the job as the handler got it (Attempt, MaxAttempts and
	// Timeout in force, Headers, Kind, Payload).
	Job *worker.Job
	// Outcome is what the daemon does with the job next.
	Outcome Outcome
	// Err is the handler's error; nil when it returned nil. A panic is a
	// *worker.PanicError; a timeout wraps worker.ErrJobTimeout.
	Err error
	// Delay is how long until the job runs again: the backoff of a
	// Retried job, the delay of a Snoozed one; 0 otherwise.
	Delay time.Duration
	// Result is what the handler last set with Job.SetResult; nil when it
	// set none.
	Result []byte
	// Progress lists every report the handler made with
	// Job.ReportProgress and that it accepted, in order (Percent rounded
	// as stored; UpdatedAt is zero: nothing is stored).
	Progress []worker.Progress
}

// Panicked reports whether the handler panicked, and with what value.
func (a *Attempt) Panicked() (any, bool) {
	var p *worker.PanicError
	if errors.As(a.Err, &p) {
		return p.Value, true
	}
	return nil, false
}

// String describes the attempt in one line, for test failure messages.
func (a *Attempt) String() string {
	s := fmt.Sprintf("%s/%s attempt %d: %s", a.Job.Queue, a.Job.ID, a.Job.Attempt, a.Outcome)
	if a.Delay > 0 {
		s += fmt.Sprintf(" (runs again in %s)", a.Delay)
	}
	if a.Err != nil {
		s += ": " + a.Err.Error()
	}
	return s
}

// RunOption changes how Run runs a handler: WithQueueOptions,
// WithConfig, WithContext.
type RunOption struct{ apply func(*runSettings) }

type runSettings struct {
	opts worker.QueueOptions
	cfg  worker.Config
	ctx  context.Context
}

// WithQueueOptions runs the handler as registered with opts: its
// MaxAttempts and Timeout apply to a job without its own, and its Backoff
// gives a retry's delay. Default: the zero QueueOptions, as Register
// fills it in (25 attempts, 30m, exponential backoff).
func WithQueueOptions(opts worker.QueueOptions) RunOption {
	return RunOption{func(s *runSettings) { s.opts = opts }}
}

// WithConfig runs the handler under cfg: its MaxResultBytes bounds
// Job.SetResult, its MaxPayloadBytes the job's payload, its Logger gets
// the attempt's log lines and its TracerProvider the attempt's span.
// Default: the zero Config's defaults. Without a Logger, warnings and
// errors go to the test's output.
func WithConfig(cfg worker.Config) RunOption {
	return RunOption{func(s *runSettings) { s.cfg = cfg }}
}

// WithContext runs the handler with a context derived from ctx instead of
// the test's (t.Context()): to hand it values, or to cancel it.
func WithContext(ctx context.Context) RunOption {
	return RunOption{func(s *runSettings) { s.ctx = ctx }}
}

// JSON returns a job whose payload is v encoded as JSON, for Run: the job
// a producer enqueues with that payload. It fails the test when v does not
// encode.
func JSON(t testing.TB, v any) *worker.Job {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("workertest.JSON: encode %T: %v", v, err)
	}
	return &worker.Job{Payload: b}
}

// jobCount numbers the ids Run gives jobs without one.
var jobCount atomic.Int64

// Run runs h on job as a Daemon runs one attempt, and returns what it
// did: no store, no Redis. The job is what a producer enqueued and a
// claim reads: fill in Payload (or use JSON), and whatever else the
// handler reads (Kind, Headers, Attempt for a later attempt, LastError,
// MaxAttempts, Timeout, Priority, Queue, ID); Run fills in the rest (an
// id, queue "test", attempt 1, the times, the limits in force), and fails
// the test when the job breaks a rule Enqueue enforces.
//
// As in a Daemon, the handler's context ends at the job's timeout,
// Job.SetResult and Job.ReportProgress work (within Config.MaxResultBytes
// and their validation), a panic is recovered as a failed attempt, and
// the outcome follows from the error, the attempt and the queue's
// options. Run fails the test only when it cannot run the handler (a nil
// handler, invalid options or job); what the handler did is in the
// Attempt, for the test to check.
func Run(t testing.TB, h worker.Handler, job *worker.Job, opts ...RunOption) *Attempt {
	t.Helper()
	s := runSettings{ctx: t.Context()}
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&s)
		}
	}
	if s.cfg.Logger == nil {
		s.cfg.Logger = testConfig(t).Logger
	}
	if job == nil {
		job = &worker.Job{}
	}
	j := prepare(job)
	if err := testhook.ValidateSpec(specOf(j), s.cfg, time.Now()); err != nil {
		t.Fatalf("workertest.Run: the job would not be enqueued: %v", err)
	}
	rec := &recorder{}
	o, herr, err := testhook.Run(s.ctx, testhook.Attempt{
		Queue: j.Queue, Handler: h, Options: s.opts, Config: s.cfg, Job: j, Recorder: rec,
	})
	if err != nil {
		t.Fatalf("workertest.Run: %v", err)
	}
	return rec.attempt(j, o, herr)
}

// prepare returns a copy of job with what a claim sets filled in.
func prepare(job *worker.Job) *worker.Job {
	j := *job
	now := time.Now()
	if j.ID == "" {
		j.ID = fmt.Sprintf("test-%d", jobCount.Add(1))
	}
	if j.Queue == "" {
		j.Queue = "test"
	}
	j.Attempt = max(j.Attempt, 1)
	j.Payload = append([]byte(nil), j.Payload...)
	j.Headers = maps.Clone(j.Headers)
	for _, t := range []*time.Time{&j.EnqueuedAt, &j.RunAt, &j.StartedAt} {
		if t.IsZero() {
			*t = now
		}
	}
	if j.Worker == "" {
		j.Worker = "workertest"
	}
	return &j
}

// specOf is the JobSpec that enqueued j.
func specOf(j *worker.Job) worker.JobSpec {
	return worker.JobSpec{
		Queue: j.Queue, Kind: j.Kind, ID: j.ID, Payload: j.Payload, MaxAttempts: j.MaxAttempts,
		Timeout: j.Timeout, Priority: j.Priority, Headers: j.Headers,
	}
}

// recorder is an attempt's pool.Recorder: it keeps what the handler
// reported and set.
type recorder struct {
	mu       sync.Mutex
	result   []byte
	progress []worker.Progress
}

var _ pool.Recorder = (*recorder)(nil)

// Report implements pool.Recorder.
func (r *recorder) Report(p store.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.progress = append(r.progress, worker.Progress{Percent: p.Percent, Message: p.Message})
}

// SetResult implements pool.Recorder.
func (r *recorder) SetResult(b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.result = b
}

// attempt is the Attempt of job, ended with o and the handler's error.
func (r *recorder) attempt(job *worker.Job, o pool.Outcome, err error) *Attempt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &Attempt{Job: job, Outcome: outcomeOf(o), Err: err, Delay: o.Delay, Result: r.result, Progress: r.progress}
}

// outcomeOf names a pool outcome.
func outcomeOf(o pool.Outcome) Outcome {
	switch o.Kind {
	case pool.Ack:
		return Done
	case pool.Retry:
		return Retried
	case pool.Dead:
		return Dead
	default:
		return Snoozed
	}
}

// ResultJSON decodes an attempt's result (Job.SetResult) as JSON into a
// T, failing the test when the handler set none or it does not decode.
func ResultJSON[T any](t testing.TB, a *Attempt) T {
	t.Helper()
	var v T
	if a.Result == nil {
		t.Fatalf("workertest.ResultJSON: %s set no result", a)
	}
	if err := json.Unmarshal(a.Result, &v); err != nil {
		t.Fatalf("workertest.ResultJSON: decode the result of %s into %T: %v (result %q)", a, v, err, a.Result)
	}
	return v
}
