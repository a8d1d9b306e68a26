package worker_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Signup is the payload of the "signups" queue's jobs.
type Signup struct {
	Email string `json:"email"`
}

// welcome is a typed handler: JSONHandler decodes each job's payload into a
// Signup before calling it.
func welcome(ctx context.Context, job *worker.Job, s Signup) error {
	if !strings.Contains(s.Email, "@") {
		return worker.Permanent(fmt.Errorf("email %q has no @", s.Email))
	}
	fmt.Printf("attempt %d of job %s: welcome %s\n", job.Attempt, job.ID, s.Email)
	return nil
}

// A handler is a function of a context and a job, so a test calls it with
// a job made by hand, as the daemon would call it: no Redis needed.
func ExampleJSONHandler() {
	h := worker.JSONHandler(welcome)
	ctx := context.Background()

	err := h.Handle(ctx, &worker.Job{ID: "j1", Queue: "signups", Attempt: 1, Payload: []byte(`{"email":"ada@example.com"}`)})
	fmt.Println("err:", err)

	// A payload that does not decode could never succeed: it is a
	// permanent failure, and the job goes to the dead set at once.
	err = h.Handle(ctx, &worker.Job{ID: "j2", Queue: "signups", Attempt: 1, Payload: []byte(`not json`)})
	var pe *worker.PermanentError
	fmt.Println("permanent:", errors.As(err, &pe))
	// Output:
	// attempt 1 of job j1: welcome ada@example.com
	// err: <nil>
	// permanent: true
}

// HandlerFunc turns a function into a Handler that gets the job's raw
// payload and headers.
func ExampleHandlerFunc() {
	h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		fmt.Printf("%s for tenant %s: %s\n", job.ID, job.Headers["tenant"], job.Payload)
		return nil
	})
	_ = h.Handle(context.Background(), &worker.Job{
		ID:      "report-6",
		Payload: []byte("monthly"),
		Headers: map[string]string{"tenant": "acme"},
	})
	// Output: report-6 for tenant acme: monthly
}

// A handler's error decides what happens to its job: nil is done, a
// Permanent error goes to the dead set, a Snooze comes back later without
// spending an attempt, and any other error is retried with backoff. Tests
// tell them apart with errors.As, as the daemon does.
func ExamplePermanent() {
	outcome := func(err error) string {
		var pe *worker.PermanentError
		var se *worker.SnoozeError
		switch {
		case err == nil:
			return "done"
		case errors.As(err, &pe):
			return "dead at once: " + pe.Err.Error()
		case errors.As(err, &se):
			return fmt.Sprintf("again in %s, no attempt spent", se.Delay)
		default:
			return "retried with backoff: " + err.Error()
		}
	}
	fmt.Println(outcome(nil))
	fmt.Println(outcome(worker.Permanent(errors.New("no such customer"))))
	fmt.Println(outcome(worker.Snooze(30 * time.Second)))
	fmt.Println(outcome(errors.New("connection reset")))
	// Output:
	// done
	// dead at once: no such customer
	// again in 30s, no attempt spent
	// retried with backoff: connection reset
}

// A Job made by hand is not running in a daemon, so ReportProgress and
// SetResult refuse it with ErrNotRunning; a handler under test may ignore
// that error.
func ExampleJob_ReportProgress() {
	job := &worker.Job{ID: "j1", Queue: "reports"}
	err := job.ReportProgress(40, "rendering page 4 of 10")
	fmt.Println(errors.Is(err, worker.ErrNotRunning))
	err = job.SetResult([]byte(`{"pages":10}`))
	fmt.Println(errors.Is(err, worker.ErrNotRunning))
	// Output:
	// true
	// true
}
