package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// execSteps is a deterministic retry policy for the executor tests.
var execSteps = FixedSteps{15 * time.Second, 3 * time.Minute, 10 * time.Minute}

func kindName(k pool.Kind) string {
	switch k {
	case pool.Ack:
		return "Ack"
	case pool.Retry:
		return "Retry"
	case pool.Dead:
		return "Dead"
	case pool.Snooze:
		return "Snooze"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	opts := QueueOptions{Backoff: execSteps}
	tests := []struct {
		name      string
		err       error
		attempt   int
		max       int
		wantKind  pool.Kind
		wantDelay time.Duration
		wantErr   string
	}{
		{"snooze", Snooze(time.Minute), 1, 5, pool.Snooze, time.Minute, ""},
		{"snooze zero", Snooze(0), 1, 5, pool.Snooze, 0, ""},
		{"snooze wrapped", fmt.Errorf("busy: %w", Snooze(2*time.Second)), 1, 5, pool.Snooze, 2 * time.Second, ""},
		{"snooze on the last attempt keeps the attempt", Snooze(time.Second), 5, 5, pool.Snooze, time.Second, ""},
		{"permanent on the first attempt", Permanent(errBoom), 1, 5, pool.Dead, 0, "permanent: boom"},
		{"permanent wrapped", fmt.Errorf("charge: %w", Permanent(errBoom)), 2, 5, pool.Dead, 0, "charge: permanent: boom"},
		{"retry after attempt 1", errBoom, 1, 5, pool.Retry, 15 * time.Second, "boom"},
		{"retry after attempt 2", errBoom, 2, 5, pool.Retry, 3 * time.Minute, "boom"},
		{"retry after attempt 4 repeats the last step", errBoom, 4, 5, pool.Retry, 10 * time.Minute, "boom"},
		{"dead on the last attempt", errBoom, 5, 5, pool.Dead, 0, "boom"},
		{"dead past the last attempt", errBoom, 6, 5, pool.Dead, 0, "boom"},
		{"dead with one attempt", errBoom, 1, 1, pool.Dead, 0, "boom"},
		{"panic retried", &PanicError{Value: "oops"}, 1, 3, pool.Retry, 15 * time.Second, "handler panic: oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			job := &Job{ID: "j", Queue: "q", Attempt: tt.attempt, MaxAttempts: tt.max}
			got := outcome(tt.err, job, opts)
			want := pool.Outcome{Kind: tt.wantKind, Delay: tt.wantDelay, Err: tt.wantErr}
			if got != want {
				t.Fatalf("outcome = {%s %s %q}; want {%s %s %q}",
					kindName(got.Kind), got.Delay, got.Err, kindName(want.Kind), want.Delay, want.Err)
			}
		})
	}
}

// negativePolicy is a RetryPolicy that misbehaves.
type negativePolicy struct{}

func (negativePolicy) Delay(int) time.Duration { return -time.Hour }

func TestOutcomeNegativeBackoffIsZero(t *testing.T) {
	t.Parallel()
	got := outcome(errors.New("x"), &Job{Attempt: 1, MaxAttempts: 2}, QueueOptions{Backoff: negativePolicy{}})
	if got.Kind != pool.Retry || got.Delay != 0 {
		t.Fatalf("outcome = {%s %s}; want {Retry 0s}", kindName(got.Kind), got.Delay)
	}
}

func TestOutcomeErrorText(t *testing.T) {
	t.Parallel()
	opts := QueueOptions{Backoff: execSteps}
	tests := []struct {
		name string
		msg  string
	}{
		{"short", "boom"},
		{"exactly the limit", strings.Repeat("x", maxErrorText)},
		{"one over the limit", strings.Repeat("x", maxErrorText+1)},
		{"10 KB ASCII", strings.Repeat("x", 10<<10)},
		{"10 KB two-byte runes", strings.Repeat("é", 5<<10)},
		{"10 KB three-byte runes", strings.Repeat("订", 10<<10/3)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := outcome(errors.New(tt.msg), &Job{Attempt: 1, MaxAttempts: 3}, opts)
			if len(tt.msg) <= maxErrorText {
				if got.Err != tt.msg {
					t.Fatalf("Err = %q; want the whole text", got.Err)
				}
				return
			}
			if len(got.Err) > maxErrorText {
				t.Fatalf("len(Err) = %d; want at most %d", len(got.Err), maxErrorText)
			}
			if len(got.Err) < maxErrorText-3 {
				t.Fatalf("len(Err) = %d; want close to %d", len(got.Err), maxErrorText)
			}
			if !strings.HasSuffix(got.Err, "...") {
				t.Fatalf("Err ends %q; want it to end with ...", got.Err[len(got.Err)-8:])
			}
			if !strings.HasPrefix(tt.msg, strings.TrimSuffix(got.Err, "...")) {
				t.Fatal("Err is not a prefix of the error text")
			}
		})
	}
}

// TestOutcomeErrorTextValidUTF8 shows that errorText cuts a long error at a
// byte, not a rune, boundary: the stored LastError can end in half a rune
// (invalid UTF-8), which JSON encoders (the admin API, the CLI) turn into
// U+FFFD or reject.
func TestOutcomeErrorTextValidUTF8(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		msg  string
	}{
		{"two-byte runes", strings.Repeat("é", 5<<10)},
		{"three-byte runes", strings.Repeat("订", 10<<10/3)},
		{"four-byte runes", strings.Repeat("📦", 10<<10/4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := outcome(errors.New(tt.msg), &Job{Attempt: 1, MaxAttempts: 3}, QueueOptions{Backoff: execSteps})
			if !utf8.ValidString(got.Err) {
				t.Fatalf("Err (%d bytes) is not valid UTF-8: ends %q", len(got.Err), got.Err[len(got.Err)-6:])
			}
		})
	}
}

// execBundle is what an executor test needs.
type execBundle struct {
	exec pool.Exec
	logs *lockedBuffer
}

// lockedBuffer is a bytes.Buffer safe for a logger and a test to share.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// records returns the JSON log records written so far.
func (b *lockedBuffer) records(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for line := range bytes.Lines(b.buf.Bytes()) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// setupExec registers h for queue "q" with opts and returns its executor.
func setupExec(t *testing.T, h Handler, opts QueueOptions) *execBundle {
	t.Helper()
	r := NewRegistry()
	if err := r.Register("q", h, opts); err != nil {
		t.Fatalf("Register: %v", err)
	}
	reg, ok := r.lookup("q")
	if !ok {
		t.Fatal("lookup(q) found nothing")
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return &execBundle{exec: executor("q", reg, execEnv{log: log, maxResult: MaxResultBytesDefault}), logs: logs}
}

// testRecord returns a claimed record with the given attempt counters.
func testRecord(attempt, maxAttempts int, timeout time.Duration) *store.Record {
	return &store.Record{
		ID:          "job-1",
		Claim:       7,
		Attempt:     attempt,
		MaxAttempts: maxAttempts,
		Timeout:     timeout,
		EnqueuedAt:  time.UnixMilli(1_700_000_000_000),
		LastError:   "earlier failure",
		Payload:     []byte(`{"n":1}`),
		RunAt:       time.UnixMilli(1_700_000_005_000),
	}
}

func TestExecutorJobFields(t *testing.T) {
	t.Parallel()
	queueOpts := QueueOptions{MaxAttempts: 9, Timeout: 2 * time.Minute, Backoff: execSteps}
	tests := []struct {
		name        string
		rec         *store.Record
		wantMax     int
		wantTimeout time.Duration
	}{
		{"queue defaults", testRecord(1, 0, 0), 9, 2 * time.Minute},
		{"job's own limits", testRecord(3, 4, 5*time.Second), 4, 5 * time.Second},
		{"job's own max, queue timeout", testRecord(2, 12, 0), 12, 2 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var got *Job
				var deadlineIn time.Duration
				b := setupExec(t, HandlerFunc(func(ctx context.Context, job *Job) error {
					got = job
					dl, ok := ctx.Deadline()
					if !ok {
						t.Error("handler context has no deadline")
					}
					deadlineIn = time.Until(dl)
					return nil
				}), queueOpts)
				o := b.exec(t.Context(), tt.rec)
				if o != (pool.Outcome{Kind: pool.Ack}) {
					t.Fatalf("outcome = {%s %s %q}; want Ack", kindName(o.Kind), o.Delay, o.Err)
				}
				if got == nil {
					t.Fatal("handler not called")
				}
				want := Job{
					ID:          tt.rec.ID,
					Queue:       "q",
					Payload:     tt.rec.Payload,
					State:       StateActive,
					Attempt:     tt.rec.Attempt,
					MaxAttempts: tt.wantMax,
					Timeout:     tt.wantTimeout,
					EnqueuedAt:  tt.rec.EnqueuedAt,
					RunAt:       tt.rec.RunAt,
					LastError:   tt.rec.LastError,
				}
				if got.maxResult != MaxResultBytesDefault {
					t.Fatalf("the handler's job has a result limit of %d, want %d", got.maxResult, MaxResultBytesDefault)
				}
				got.run, got.maxResult = pool.Run{}, 0
				if fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", want) {
					t.Fatalf("handler got\n%+v\nwant\n%+v", *got, want)
				}
				if deadlineIn != tt.wantTimeout {
					t.Fatalf("context deadline in %s; want the job timeout %s", deadlineIn, tt.wantTimeout)
				}
			})
		})
	}
}

func TestExecutorOutcomes(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		ret       error
		attempt   int
		wantKind  pool.Kind
		wantDelay time.Duration
		wantErr   string
	}{
		{"success", nil, 1, pool.Ack, 0, ""},
		{"success on the last attempt", nil, 3, pool.Ack, 0, ""},
		{"error retried", errBoom, 1, pool.Retry, 15 * time.Second, "boom"},
		{"error retried with the second step", errBoom, 2, pool.Retry, 3 * time.Minute, "boom"},
		{"error on the last attempt", errBoom, 3, pool.Dead, 0, "boom"},
		{"permanent", Permanent(errBoom), 1, pool.Dead, 0, "permanent: boom"},
		{"snooze", Snooze(time.Hour), 3, pool.Snooze, time.Hour, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupExec(t, HandlerFunc(func(context.Context, *Job) error { return tt.ret }),
				QueueOptions{MaxAttempts: 3, Backoff: execSteps})
			got := b.exec(t.Context(), testRecord(tt.attempt, 0, 0))
			want := pool.Outcome{Kind: tt.wantKind, Delay: tt.wantDelay, Err: tt.wantErr}
			if got != want {
				t.Fatalf("outcome = {%s %s %q}; want {%s %s %q}",
					kindName(got.Kind), got.Delay, got.Err, kindName(want.Kind), want.Delay, want.Err)
			}
		})
	}
}

func TestExecutorPanic(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		value     any
		attempt   int
		wantKind  pool.Kind
		wantDelay time.Duration
		wantText  string
	}{
		{"string, retried", "kaboom", 1, pool.Retry, 15 * time.Second, "handler panic: kaboom"},
		{"error, retried", errors.New("nil map"), 2, pool.Retry, 3 * time.Minute, "handler panic: nil map"},
		{"on the last attempt", "kaboom", 3, pool.Dead, 0, "handler panic: kaboom"},
		{"panic(nil)", nil, 1, pool.Retry, 15 * time.Second, "handler panic: panic called with nil argument"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupExec(t, HandlerFunc(func(context.Context, *Job) error { panic(tt.value) }),
				QueueOptions{MaxAttempts: 3, Backoff: execSteps})
			got := b.exec(t.Context(), testRecord(tt.attempt, 0, 0))
			if got.Kind != tt.wantKind || got.Delay != tt.wantDelay {
				t.Fatalf("outcome = {%s %s}; want {%s %s}", kindName(got.Kind), got.Delay, kindName(tt.wantKind), tt.wantDelay)
			}
			if !strings.Contains(got.Err, tt.wantText) {
				t.Fatalf("Err = %q; want it to contain %q", got.Err, tt.wantText)
			}
			var panicRecord map[string]any
			for _, r := range b.logs.records(t) {
				if r["level"] == "ERROR" {
					panicRecord = r
				}
			}
			if panicRecord == nil {
				t.Fatal("no error record logged for the panic")
			}
			stack, _ := panicRecord["stack"].(string)
			if !strings.Contains(stack, "goroutine") || !strings.Contains(stack, "exec_test.go") {
				t.Fatalf("logged stack = %q; want a stack trace through the handler", stack)
			}
			if panicRecord["queue"] != "q" || panicRecord["job"] != "job-1" {
				t.Fatalf("panic record = %v; want queue q and job job-1", panicRecord)
			}
			if p, _ := panicRecord["panic"].(string); !strings.Contains(tt.wantText, p) {
				t.Fatalf("logged panic = %q; want the panic value", p)
			}
		})
	}
}

func TestExecutorTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		recTO   time.Duration // the record's own timeout; 0 = queue's
		queueTO time.Duration
		ret     func(ctx context.Context) error
		wantErr string
	}{
		{
			name:    "job timeout, handler returns ctx.Err",
			recTO:   20 * time.Millisecond,
			queueTO: time.Hour,
			ret:     func(ctx context.Context) error { return ctx.Err() },
			wantErr: "context deadline exceeded (job timed out)",
		},
		{
			name:    "queue timeout, handler returns ctx.Err",
			queueTO: 20 * time.Millisecond,
			ret:     func(ctx context.Context) error { return ctx.Err() },
			wantErr: "context deadline exceeded (job timed out)",
		},
		{
			name:    "handler returns the cause",
			recTO:   20 * time.Millisecond,
			queueTO: time.Hour,
			ret:     func(ctx context.Context) error { return context.Cause(ctx) },
			wantErr: "job timed out",
		},
		{
			name:    "handler wraps its own error",
			recTO:   20 * time.Millisecond,
			queueTO: time.Hour,
			ret:     func(ctx context.Context) error { return fmt.Errorf("call API: %w", ctx.Err()) },
			wantErr: "call API: context deadline exceeded (job timed out)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var cause error
				var waited time.Duration
				b := setupExec(t, HandlerFunc(func(ctx context.Context, _ *Job) error {
					start := time.Now()
					<-ctx.Done()
					waited = time.Since(start)
					cause = context.Cause(ctx)
					return tt.ret(ctx)
				}), QueueOptions{MaxAttempts: 3, Timeout: tt.queueTO, Backoff: execSteps})
				got := b.exec(t.Context(), testRecord(1, 0, tt.recTO))
				if !errors.Is(cause, ErrJobTimeout) {
					t.Fatalf("context.Cause = %v; want ErrJobTimeout", cause)
				}
				if waited != 20*time.Millisecond {
					t.Fatalf("handler context ended after %s; want 20ms", waited)
				}
				if got.Kind != pool.Retry || got.Delay != 15*time.Second {
					t.Fatalf("outcome = {%s %s}; want {Retry 15s}", kindName(got.Kind), got.Delay)
				}
				if got.Err != tt.wantErr {
					t.Fatalf("Err = %q; want %q", got.Err, tt.wantErr)
				}
				if !strings.Contains(got.Err, "timed out") {
					t.Fatalf("Err = %q; want it to mention the timeout", got.Err)
				}
			})
		})
	}
}

func TestExecutorParentCancelled(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		cause     error
		ret       func(ctx context.Context) error
		attempt   int
		wantKind  pool.Kind
		wantDelay time.Duration
		wantErr   string
	}{
		{"shutdown, ctx.Err", ErrShutdown, func(ctx context.Context) error { return ctx.Err() }, 1, pool.Snooze, 0, ""},
		{"shutdown, cause", ErrShutdown, context.Cause, 1, pool.Snooze, 0, ""},
		{"shutdown, own error", ErrShutdown, func(context.Context) error { return errBoom }, 1, pool.Snooze, 0, ""},
		{"shutdown, permanent", ErrShutdown, func(context.Context) error { return Permanent(errBoom) }, 1, pool.Snooze, 0, ""},
		{"shutdown, snooze asks for an hour", ErrShutdown, func(context.Context) error { return Snooze(time.Hour) }, 1, pool.Snooze, 0, ""},
		{"shutdown, last attempt", ErrShutdown, func(ctx context.Context) error { return ctx.Err() }, 3, pool.Snooze, 0, ""},
		{"shutdown wrapped as cause", fmt.Errorf("drain: %w", ErrShutdown), func(ctx context.Context) error { return ctx.Err() }, 1, pool.Snooze, 0, ""},
		{"shutdown, handler finished anyway", ErrShutdown, func(context.Context) error { return nil }, 1, pool.Ack, 0, ""},
		// With the lease lost the job is not ours: the outcome is not this
		// attempt's failure (its write is a stale no-op in the store).
		{"lease lost", ErrLeaseLost, func(ctx context.Context) error { return ctx.Err() }, 1, pool.Snooze, 0, ""},
		{"lease lost, handler finished anyway", ErrLeaseLost, func(context.Context) error { return nil }, 1, pool.Ack, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancelCause(t.Context())
			b := setupExec(t, HandlerFunc(func(hctx context.Context, _ *Job) error {
				cancel(tt.cause)
				<-hctx.Done()
				return tt.ret(hctx)
			}), QueueOptions{MaxAttempts: 3, Backoff: execSteps})
			got := b.exec(ctx, testRecord(tt.attempt, 0, 0))
			want := pool.Outcome{Kind: tt.wantKind, Delay: tt.wantDelay, Err: tt.wantErr}
			if got != want {
				t.Fatalf("outcome = {%s %s %q}; want {%s %s %q}",
					kindName(got.Kind), got.Delay, got.Err, kindName(want.Kind), want.Delay, want.Err)
			}
		})
	}
}

func TestExecutorLogs(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		ret       error
		attempt   int
		wantLevel string
		wantMsg   string
	}{
		{"retry", errBoom, 1, "WARN", "job failed; will retry"},
		{"dead", errBoom, 3, "WARN", "job failed for good; moved to the dead set"},
		{"snooze", Snooze(time.Second), 1, "DEBUG", "job snoozed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupExec(t, HandlerFunc(func(context.Context, *Job) error { return tt.ret }),
				QueueOptions{MaxAttempts: 3, Backoff: execSteps})
			b.exec(t.Context(), testRecord(tt.attempt, 0, 0))
			recs := b.logs.records(t)
			if len(recs) != 1 {
				t.Fatalf("%d log records; want 1: %v", len(recs), recs)
			}
			r := recs[0]
			if r["level"] != tt.wantLevel || r["msg"] != tt.wantMsg {
				t.Fatalf("log = %v; want level %s msg %q", r, tt.wantLevel, tt.wantMsg)
			}
			if r["queue"] != "q" || r["job"] != "job-1" || r["attempt"] != float64(tt.attempt) || r["max_attempts"] != float64(3) {
				t.Fatalf("log = %v; want queue, job, attempt and max_attempts", r)
			}
		})
	}
}

// TestExecutorLogsCancel: a handler whose job was cancelled while it ran
// (its context's cause ErrCancelled) is logged once, at info, as
// cancelled: not as a failure, even on its last attempt.
func TestExecutorLogsCancel(t *testing.T) {
	t.Parallel()
	b := setupExec(t, HandlerFunc(func(ctx context.Context, _ *Job) error { return ctx.Err() }),
		QueueOptions{MaxAttempts: 3, Backoff: execSteps})
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(ErrCancelled)
	o := b.exec(ctx, testRecord(3, 0, 0))
	if o.Kind != pool.Snooze {
		t.Errorf("outcome %+v; want no failure written (the pool writes nothing for a cancelled run)", o)
	}
	recs := b.logs.records(t)
	if len(recs) != 1 || recs[0]["level"] != "INFO" || recs[0]["msg"] != "job cancelled; its handler returned" {
		t.Fatalf("logs = %v; want one INFO record of the cancel", recs)
	}
	if r := recs[0]; r["queue"] != "q" || r["job"] != "job-1" || r["attempt"] != float64(3) {
		t.Errorf("log = %v; want queue, job and attempt", r)
	}
}
