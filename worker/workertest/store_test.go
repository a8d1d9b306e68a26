package workertest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/workertest"
)

// fakeT is a testing.TB whose failures are recorded instead of failing the
// test: Fatalf ends the goroutine, as testing's does.
type fakeT struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (f *fakeT) Helper() {}

func (f *fakeT) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs = append(f.msgs, fmt.Sprintf(format, args...))
}

func (f *fakeT) Fatalf(format string, args ...any) {
	f.Errorf(format, args...)
	runtime.Goexit()
}

// failure runs fn with a fakeT and returns what it failed with; "" when
// it did not fail.
func failure(t *testing.T, fn func(tb testing.TB)) string {
	t.Helper()
	f := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return strings.Join(f.msgs, "\n")
}

type email struct {
	To      string `json:"to"`
	Subject string `json:"subject"`
}

func enqueue(t *testing.T, c *worker.Client, spec worker.JobSpec) string {
	t.Helper()
	id, err := c.Enqueue(t.Context(), spec)
	if err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	return id
}

func TestRequireEnqueued(t *testing.T) {
	t.Parallel()
	s := workertest.New(t)
	c := s.Client()
	enqueue(t, c, worker.JobSpec{Queue: "emails", Kind: "welcome", Payload: []byte(`{"to":"ada@example.com","subject":"hi"}`),
		Delay: time.Hour, Priority: worker.PriorityHigh, UniqueKey: "welcome:ada", Headers: map[string]string{"tenant": "acme"}})
	enqueue(t, c, worker.JobSpec{Queue: "emails", Payload: []byte(`{"to":"bob@example.com"}`)})
	enqueue(t, c, worker.JobSpec{Queue: "reports", Payload: []byte("not json")})

	got, job := workertest.RequireEnqueued[email](t, s, workertest.Queue("emails"), workertest.Kind("welcome"),
		workertest.RunAt(s.Now().Add(time.Hour)), workertest.Priority(worker.PriorityHigh), workertest.UniqueKey("welcome:ada"),
		workertest.State(worker.StateScheduled), workertest.Header("tenant", "acme"),
		workertest.Payload(func(e email) bool { return strings.HasPrefix(e.To, "ada") }))
	if got != (email{To: "ada@example.com", Subject: "hi"}) || job.Queue != "emails" {
		t.Errorf("RequireEnqueued = %+v, %s/%s", got, job.Queue, job.ID)
	}
	workertest.RequireEnqueued[email](t, s, workertest.PayloadEqual(email{To: "bob@example.com"}), workertest.State(worker.StateReady))
	if raw, _ := workertest.RequireEnqueued[[]byte](t, s, workertest.Queue("reports")); string(raw) != "not json" {
		t.Errorf("a []byte payload = %q", raw)
	}
	workertest.RequireNotEnqueued(t, s, workertest.Queue("emails"), workertest.Kind("receipt"))
	if n := len(workertest.Enqueued(t, s, workertest.Queue("emails"))); n != 2 {
		t.Errorf("Enqueued(emails) = %d jobs, want 2", n)
	}

	// The failures name what was asked and list what the store holds.
	msg := failure(t, func(tb testing.TB) {
		workertest.RequireEnqueued[email](tb, s, workertest.Queue("emails"), workertest.PayloadEqual(email{To: "eve@example.com"}))
	})
	for _, want := range []string{`queue "emails"`, "payload {To:eve@example.com Subject:}", "the store holds 3:",
		`kind "welcome"`, `{"to":"bob@example.com"}`, `"not json"`, "priority high", `unique key "welcome:ada"`} {
		if !strings.Contains(msg, want) {
			t.Errorf("the failure does not say %q:\n%s", want, msg)
		}
	}
	msg = failure(t, func(tb testing.TB) { workertest.RequireNotEnqueued(tb, s, workertest.Queue("reports")) })
	if !strings.Contains(msg, "the store holds 1:") || !strings.Contains(msg, "reports/") {
		t.Errorf("RequireNotEnqueued's failure:\n%s", msg)
	}
	msg = failure(t, func(tb testing.TB) { workertest.RequireEnqueued[email](tb, s, workertest.Queue("reports")) })
	if !strings.Contains(msg, "a payload that decodes into workertest_test.email") {
		t.Errorf("a payload that does not decode: the failure:\n%s", msg)
	}
}

func TestStoreClock(t *testing.T) {
	t.Parallel()
	s := workertest.New(t)
	t0 := s.Now()
	enqueue(t, s.Client(), worker.JobSpec{Queue: "q", ID: "later", Delay: time.Minute})
	workertest.RequireEnqueued[any](t, s, workertest.ID("later"), workertest.State(worker.StateScheduled), workertest.RunAt(t0.Add(time.Minute)))
	s.Advance(time.Minute)
	if !s.Now().Equal(t0.Add(time.Minute)) {
		t.Errorf("Now after Advance(1m) = %s, want %s", s.Now(), t0.Add(time.Minute))
	}
	workertest.RequireEnqueued[any](t, s, workertest.ID("later"), workertest.State(worker.StateReady))
	if msg := failure(t, func(tb testing.TB) { workertest.New(tb).Advance(-time.Second) }); !strings.Contains(msg, "only moves forward") {
		t.Errorf("Advance(-1s): %q", msg)
	}
}

// TestDrain: retries, backoff, snoozes, the dead set and the jobs
// handlers enqueue behave as in production, and Advance makes the later
// attempts due.
func TestDrain(t *testing.T) {
	t.Parallel()
	s := workertest.New(t)
	c := s.Client()
	reg := worker.NewRegistry()
	var calls sync.Map
	must(t, reg.Register("emails", worker.JSONHandler(func(ctx context.Context, job *worker.Job, e email) error {
		n, _ := calls.LoadOrStore(e.To, new(int))
		*n.(*int)++
		switch e.To {
		case "flaky":
			if job.Attempt < 3 {
				return errors.New("smtp: try again")
			}
		case "busy":
			if *n.(*int) == 1 {
				return worker.Snooze(30 * time.Second)
			}
		case "bad":
			return worker.Permanent(errors.New("no such address"))
		}
		if err := job.ReportProgress(100, "sent"); err != nil {
			return err
		}
		if _, err := c.Enqueue(ctx, worker.JobSpec{Queue: "audit", Payload: job.Payload}); err != nil {
			return err
		}
		return job.SetResult([]byte(`"ok"`))
	}), worker.QueueOptions{MaxAttempts: 5, Backoff: worker.FixedSteps{10 * time.Second, 20 * time.Second}}))
	var audited sync.Map
	must(t, reg.Register("audit", worker.JSONHandler(func(_ context.Context, _ *worker.Job, e email) error {
		audited.Store(e.To, true)
		return nil
	}), worker.QueueOptions{}))

	for _, to := range []string{"ada", "flaky", "busy", "bad"} {
		enqueue(t, c, worker.JobSpec{Queue: "emails", ID: to, Payload: fmt.Appendf(nil, `{"to":%q}`, to)})
	}
	enqueue(t, c, worker.JobSpec{Queue: "emails", ID: "tomorrow", Payload: []byte(`{"to":"tomorrow"}`), Delay: 24 * time.Hour})

	d := s.Drain(t, reg)
	// ada done (and its audit job), flaky retried, busy snoozed, bad dead.
	if d.Count(workertest.Done) != 2 || d.Count(workertest.Retried) != 1 || d.Count(workertest.Snoozed) != 1 || d.Count(workertest.Dead) != 1 {
		t.Fatalf("first drain:\n%s", d)
	}
	for _, a := range d.Attempts {
		switch a.Job.ID {
		case "ada":
			if string(a.Result) != `"ok"` || len(a.Progress) != 1 {
				t.Errorf("ada: result %q, progress %v", a.Result, a.Progress)
			}
		case "flaky":
			if a.Delay != 10*time.Second || a.Err == nil {
				t.Errorf("flaky: %s", a)
			}
		case "busy":
			if a.Delay != 30*time.Second {
				t.Errorf("busy: %s", a)
			}
		}
	}
	if _, ok := audited.Load("ada"); !ok {
		t.Error("the job ada's handler enqueued did not run")
	}
	workertest.RequireEnqueued[email](t, s, workertest.ID("bad"), workertest.State(worker.StateDead))
	workertest.RequireEnqueued[email](t, s, workertest.ID("flaky"), workertest.State(worker.StateScheduled), workertest.RunAt(s.Now().Add(10*time.Second)))

	// Nothing is due until the clock moves.
	if d := s.Drain(t, reg); len(d.Attempts) != 0 {
		t.Fatalf("a drain with nothing due ran:\n%s", d)
	}
	s.Advance(10 * time.Second) // flaky's second attempt
	if d := s.Drain(t, reg); len(d.Attempts) != 1 || d.Attempts[0].Job.Attempt != 2 || d.Attempts[0].Delay != 20*time.Second {
		t.Fatalf("after 10s:\n%s", d)
	}
	s.Advance(20 * time.Second) // busy (30s after the first drain) and flaky's third attempt
	if d := s.Drain(t, reg); d.Count(workertest.Done) != 4 || len(d.Attempts) != 4 {
		t.Fatalf("after 30s:\n%s", d)
	}
	workertest.RequireNotEnqueued(t, s, workertest.Queue("audit"))
	workertest.RequireEnqueued[email](t, s, workertest.ID("tomorrow"), workertest.State(worker.StateScheduled))
	s.Advance(24 * time.Hour)
	if d := s.Drain(t, reg); d.Count(workertest.Done) != 2 {
		t.Fatalf("after a day:\n%s", d)
	}
	workertest.RequireNotEnqueued(t, s, workertest.State(worker.StateReady))
}

// TestDrainPaused: a paused queue's due jobs are left, and Drain returns.
func TestDrainPaused(t *testing.T) {
	t.Parallel()
	s := workertest.New(t)
	reg := worker.NewRegistry()
	must(t, reg.Register("q", worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }), worker.QueueOptions{}))
	enqueue(t, s.Client(), worker.JobSpec{Queue: "q"})
	must(t, s.Admin().Pause(t.Context(), "q"))
	if d := s.Drain(t, reg); len(d.Attempts) != 0 {
		t.Fatalf("a paused queue ran:\n%s", d)
	}
	must(t, s.Admin().Resume(t.Context(), "q"))
	if d := s.Drain(t, reg); d.Count(workertest.Done) != 1 {
		t.Fatalf("after the resume:\n%s", d)
	}
}

// TestStart: a Daemon started for the test runs what is enqueued, and
// a retained job keeps its result.
func TestStart(t *testing.T) {
	t.Parallel()
	s := workertest.New(t)
	reg := worker.NewRegistry()
	must(t, reg.Register("q", worker.HandlerFunc(func(_ context.Context, job *worker.Job) error {
		return job.SetResult([]byte("done"))
	}), worker.QueueOptions{RetainCompleted: worker.Retention{Count: 10}}))
	s.Start(t, reg)
	id := enqueue(t, s.Client(), worker.JobSpec{Queue: "q"})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := s.Client().WaitEmpty(ctx, "q"); err != nil {
		t.Fatal(err)
	}
	job, err := s.Client().Get(t.Context(), "q", id)
	if err != nil || job.State != worker.StateCompleted || string(job.Result) != "done" {
		t.Fatalf("Get = %+v, %v; want completed with result done", job, err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
