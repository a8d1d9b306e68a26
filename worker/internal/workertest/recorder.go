package workertest

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// Call is what a handler saw in one attempt.
type Call struct {
	ID          string
	Payload     string
	Attempt     int
	MaxAttempts int
	Timeout     time.Duration
	LastError   string
	RunAt       time.Time
	Start, End  time.Time
	Cause       error // context.Cause of the handler's context when it returned
	Err         error // what the handler returned
}

// Recorder wraps handlers and keeps every attempt they ran, by job id.
type Recorder struct {
	mu    sync.Mutex
	calls map[string][]Call
	total int
}

// NewRecorder returns a Recorder with no attempts yet.
func NewRecorder() *Recorder { return &Recorder{calls: make(map[string][]Call)} }

// Handler returns a Handler that records each attempt of f.
func (r *Recorder) Handler(f func(ctx context.Context, job *worker.Job) error) worker.HandlerFunc {
	return func(ctx context.Context, job *worker.Job) error {
		c := Call{
			ID: job.ID, Payload: string(job.Payload), Attempt: job.Attempt, MaxAttempts: job.MaxAttempts,
			Timeout: job.Timeout, LastError: job.LastError, RunAt: job.RunAt, Start: time.Now(),
		}
		defer func() {
			c.End = time.Now()
			c.Cause = context.Cause(ctx)
			r.mu.Lock()
			r.calls[c.ID] = append(r.calls[c.ID], c)
			r.total++
			r.mu.Unlock()
		}()
		c.Err = f(ctx, job)
		return c.Err
	}
}

// Of returns the attempts recorded for id so far.
func (r *Recorder) Of(id string) []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Call(nil), r.calls[id]...)
}

// All returns the attempts recorded so far, by job id.
func (r *Recorder) All() map[string][]Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	all := make(map[string][]Call, len(r.calls))
	for id, calls := range r.calls {
		all[id] = append([]Call(nil), calls...)
	}
	return all
}

// Count returns how many attempts of any job have been recorded.
func (r *Recorder) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// WaitCalls waits until id has run n attempts and returns them.
func (r *Recorder) WaitCalls(t testing.TB, id string, n int, within time.Duration) []Call {
	t.Helper()
	testkit.Eventually(t, within, "job "+id+" to run "+strconv.Itoa(n)+" attempt(s)", func() bool { return len(r.Of(id)) >= n })
	return r.Of(id)
}

// Succeed is a handler body that does nothing and succeeds.
func Succeed(context.Context, *worker.Job) error { return nil }
