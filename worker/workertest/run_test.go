package workertest_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/workertest"
)

type order struct {
	ID    int    `json:"id"`
	Email string `json:"email"`
}

type receipt struct {
	Order int    `json:"order"`
	Sent  string `json:"sent"`
}

// send is a handler as users write them: it reports progress, sets a
// result, and fails in each of the ways the daemon tells apart.
func send(_ context.Context, job *worker.Job, o order) error {
	switch o.Email {
	case "":
		return worker.Permanent(errors.New("no email"))
	case "busy":
		return worker.Snooze(time.Minute)
	case "flaky":
		return errors.New("smtp: 451 try again")
	case "panic":
		panic("boom")
	}
	if err := job.ReportProgress(50, "rendering"); err != nil {
		return err
	}
	if err := job.ReportProgress(100, "sent"); err != nil {
		return err
	}
	return job.SetResult([]byte(`{"order":` + itoa(o.ID) + `,"sent":"` + o.Email + `"}`))
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestRunDone(t *testing.T) {
	t.Parallel()
	out := workertest.Run(t, worker.JSONHandler(send), workertest.JSON(t, order{ID: 7, Email: "ada@example.com"}))
	if out.Outcome != workertest.Done || out.Err != nil {
		t.Fatalf("outcome %s, err %v; want done", out.Outcome, out.Err)
	}
	if got := workertest.ResultJSON[receipt](t, out); got != (receipt{Order: 7, Sent: "ada@example.com"}) {
		t.Errorf("result = %+v", got)
	}
	want := []worker.Progress{{Percent: 50, Message: "rendering"}, {Percent: 100, Message: "sent"}}
	if len(out.Progress) != 2 || out.Progress[0] != want[0] || out.Progress[1] != want[1] {
		t.Errorf("progress = %+v, want %+v", out.Progress, want)
	}
	if out.Job.Attempt != 1 || out.Job.MaxAttempts != 25 || out.Job.Timeout != 30*time.Minute || out.Job.State != worker.StateActive {
		t.Errorf("job = attempt %d of %d, timeout %s, state %s; want 1 of 25, 30m, active", out.Job.Attempt, out.Job.MaxAttempts, out.Job.Timeout, out.Job.State)
	}
}

func TestRunOutcomes(t *testing.T) {
	t.Parallel()
	h := worker.JSONHandler(send)
	backoff := worker.FixedSteps{time.Second, 2 * time.Second}
	for _, tc := range []struct {
		name    string
		job     *worker.Job
		outcome workertest.Outcome
		delay   time.Duration
		err     string
		panic   bool
	}{
		{name: "permanent", job: workertest.JSON(t, order{ID: 1}), outcome: workertest.Dead, err: "permanent: no email"},
		{name: "snoozed", job: workertest.JSON(t, order{ID: 1, Email: "busy"}), outcome: workertest.Snoozed, delay: time.Minute, err: "snoozed for 1m0s"},
		{name: "retried with the queue's backoff", job: workertest.JSON(t, order{ID: 1, Email: "flaky"}), outcome: workertest.Retried, delay: time.Second, err: "451"},
		{name: "second attempt's backoff", job: &worker.Job{Payload: []byte(`{"email":"flaky"}`), Attempt: 2}, outcome: workertest.Retried, delay: 2 * time.Second, err: "451"},
		{name: "last attempt is dead", job: &worker.Job{Payload: []byte(`{"email":"flaky"}`), Attempt: 3}, outcome: workertest.Dead, err: "451"},
		{name: "job's own limit", job: &worker.Job{Payload: []byte(`{"email":"flaky"}`), MaxAttempts: 1}, outcome: workertest.Dead, err: "451"},
		{name: "panic is a failed attempt", job: workertest.JSON(t, order{Email: "panic"}), outcome: workertest.Retried, delay: time.Second, err: "handler panic: boom", panic: true},
		{name: "undecodable payload", job: &worker.Job{Payload: []byte(`{`)}, outcome: workertest.Dead, err: "decode JSON payload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := workertest.Run(t, h, tc.job, workertest.WithQueueOptions(worker.QueueOptions{MaxAttempts: 3, Backoff: backoff}))
			if out.Outcome != tc.outcome || out.Delay != tc.delay {
				t.Errorf("outcome %s after %s, want %s after %s (%v)", out.Outcome, out.Delay, tc.outcome, tc.delay, out)
			}
			if out.Err == nil || !strings.Contains(out.Err.Error(), tc.err) {
				t.Errorf("err = %v, want one with %q", out.Err, tc.err)
			}
			if v, ok := out.Panicked(); ok != tc.panic || ok && v != "boom" {
				t.Errorf("Panicked() = %v, %v; want %v", v, ok, tc.panic)
			}
			if out.Result != nil || out.Progress != nil {
				t.Errorf("result %q, progress %v; want none", out.Result, out.Progress)
			}
		})
	}
}

// TestRunLimits: SetResult and ReportProgress refuse what a Daemon
// refuses, and the handler's context ends at the job's timeout.
func TestRunLimits(t *testing.T) {
	t.Parallel()
	h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		if err := job.SetResult(make([]byte, 10)); !errors.Is(err, worker.ErrInvalid) {
			t.Errorf("SetResult over Config.MaxResultBytes = %v, want a *worker.ValidationError", err)
		}
		if err := job.SetResult(make([]byte, 8)); err != nil {
			t.Errorf("SetResult within the limit: %v", err)
		}
		if err := job.ReportProgress(101, ""); !errors.Is(err, worker.ErrInvalid) {
			t.Errorf("ReportProgress(101) = %v, want a *worker.ValidationError", err)
		}
		if err := job.ReportProgress(33.333, "a\x00b"); !errors.Is(err, worker.ErrInvalid) {
			t.Errorf("ReportProgress with a control character = %v, want a *worker.ValidationError", err)
		}
		if err := job.ReportProgress(33.333, "third"); err != nil {
			t.Errorf("ReportProgress: %v", err)
		}
		<-ctx.Done()
		return context.Cause(ctx)
	})
	out := workertest.Run(t, h, &worker.Job{Timeout: 10 * time.Millisecond}, workertest.WithConfig(worker.Config{MaxResultBytes: 8}))
	if !errors.Is(out.Err, worker.ErrJobTimeout) || out.Outcome != workertest.Retried {
		t.Errorf("err = %v, outcome %s; want worker.ErrJobTimeout, retried", out.Err, out.Outcome)
	}
	if len(out.Result) != 8 || len(out.Progress) != 1 || out.Progress[0].Percent != 33.33 {
		t.Errorf("result %d bytes, progress %+v; want 8 bytes and one report of 33.33%%", len(out.Result), out.Progress)
	}
}

// TestRunDefaultResultLimit: without WithConfig, SetResult enforces the
// default Config.MaxResultBytes (64 KiB).
func TestRunDefaultResultLimit(t *testing.T) {
	t.Parallel()
	var errs []error
	h := worker.HandlerFunc(func(_ context.Context, job *worker.Job) error {
		errs = append(errs, job.SetResult(make([]byte, 64<<10)), job.SetResult(make([]byte, 64<<10+1)))
		return nil
	})
	workertest.Run(t, h, nil)
	if errs[0] != nil || !errors.Is(errs[1], worker.ErrInvalid) {
		t.Errorf("SetResult of 64 KiB and of one byte more = %v; want nil, then a *worker.ValidationError", errs)
	}
}

// TestRunKinds: a queue of several kinds runs the handler of the job's
// kind, and headers reach it.
func TestRunKinds(t *testing.T) {
	t.Parallel()
	var got string
	h := worker.Kinds{
		"email.welcome": worker.HandlerFunc(func(_ context.Context, job *worker.Job) error { got = "welcome " + job.Headers["tenant"]; return nil }),
		"email.receipt": worker.HandlerFunc(func(context.Context, *worker.Job) error { got = "receipt"; return nil }),
	}
	out := workertest.Run(t, h, &worker.Job{Kind: "email.welcome", Headers: map[string]string{"tenant": "acme"}})
	if out.Outcome != workertest.Done || got != "welcome acme" {
		t.Errorf("outcome %s, ran %q; want done, welcome acme", out.Outcome, got)
	}
	if out := workertest.Run(t, h, &worker.Job{Kind: "email.unknown"}); out.Outcome != workertest.Dead {
		t.Errorf("an unknown kind: outcome %s, want dead (%v)", out.Outcome, out.Err)
	}
}
