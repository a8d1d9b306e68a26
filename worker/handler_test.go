package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// noopJobHandler is a Handler that does nothing.
var noopJobHandler = HandlerFunc(func(context.Context, *Job) error { return nil })

func TestHandlerFunc(t *testing.T) {
	t.Parallel()
	errBoom := errors.New("boom")
	tests := []struct {
		name string
		ret  error
	}{
		{"nil", nil},
		{"error", errBoom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			type ctxKey struct{}
			ctx := context.WithValue(t.Context(), ctxKey{}, "v")
			job := &Job{ID: "j1", Queue: "q"}
			var gotCtx context.Context
			var gotJob *Job
			var h Handler = HandlerFunc(func(ctx context.Context, j *Job) error {
				gotCtx, gotJob = ctx, j
				return tt.ret
			})
			if err := h.Handle(ctx, job); err != tt.ret { //nolint:errorlint // the very error the handler returned
				t.Fatalf("Handle = %v; want %v", err, tt.ret)
			}
			if gotJob != job {
				t.Fatalf("the function got job %p; want %p", gotJob, job)
			}
			if gotCtx.Value(ctxKey{}) != "v" {
				t.Fatal("the function did not get the caller's context")
			}
		})
	}
}

func TestJSONHandler(t *testing.T) {
	t.Parallel()
	type order struct {
		ID    int      `json:"id"`
		Email string   `json:"email"`
		Items []string `json:"items"`
	}
	errBoom := errors.New("boom")
	tests := []struct {
		name      string
		payload   string
		ret       error
		wantCall  bool
		want      order
		wantPerm  bool
		wantInErr []string
	}{
		{
			name:     "decodes",
			payload:  `{"id":42,"email":"a@example.com","items":["x","y"]}`,
			wantCall: true,
			want:     order{ID: 42, Email: "a@example.com", Items: []string{"x", "y"}},
		},
		{
			name:     "unknown fields ignored",
			payload:  `{"id":1,"extra":true}`,
			wantCall: true,
			want:     order{ID: 1},
		},
		{
			name:      "handler error passed through",
			payload:   `{"id":7}`,
			ret:       errBoom,
			wantCall:  true,
			want:      order{ID: 7},
			wantInErr: []string{"boom"},
		},
		{
			name:      "bad JSON",
			payload:   `{"id":`,
			wantPerm:  true,
			wantInErr: []string{"decode JSON", "order"},
		},
		{
			name:      "wrong type",
			payload:   `{"id":"forty-two"}`,
			wantPerm:  true,
			wantInErr: []string{"decode JSON"},
		},
		{
			name:      "empty payload",
			payload:   ``,
			wantPerm:  true,
			wantInErr: []string{"decode JSON"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			job := &Job{ID: "j1", Queue: "orders", Payload: []byte(tt.payload)}
			called := false
			h := JSONHandler(func(ctx context.Context, j *Job, o order) error {
				called = true
				if j != job {
					t.Errorf("fn got job %p; want %p", j, job)
				}
				if fmt.Sprint(o) != fmt.Sprint(tt.want) {
					t.Errorf("fn got %+v; want %+v", o, tt.want)
				}
				return tt.ret
			})
			err := h.Handle(t.Context(), job)
			if called != tt.wantCall {
				t.Fatalf("fn called = %t; want %t", called, tt.wantCall)
			}
			if tt.ret != nil && !errors.Is(err, tt.ret) {
				t.Fatalf("Handle = %v; want %v", err, tt.ret)
			}
			var perm *PermanentError
			if got := errors.As(err, &perm); got != tt.wantPerm {
				t.Fatalf("Handle = %v; errors.As(*PermanentError) = %t, want %t", err, got, tt.wantPerm)
			}
			if tt.ret == nil && !tt.wantPerm && err != nil {
				t.Fatalf("Handle = %v; want nil", err)
			}
			for _, w := range tt.wantInErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("Handle = %v; want it to mention %q", err, w)
				}
			}
		})
	}
}

func TestJSONHandlerPointerAndMap(t *testing.T) {
	t.Parallel()
	t.Run("pointer", func(t *testing.T) {
		t.Parallel()
		var got *struct{ N int }
		h := JSONHandler(func(_ context.Context, _ *Job, p *struct{ N int }) error { got = p; return nil })
		if err := h.Handle(t.Context(), &Job{Payload: []byte(`{"N":3}`)}); err != nil {
			t.Fatal(err)
		}
		if got == nil || got.N != 3 {
			t.Fatalf("got %+v; want &{N:3}", got)
		}
	})
	t.Run("map", func(t *testing.T) {
		t.Parallel()
		var got map[string]any
		h := JSONHandler(func(_ context.Context, _ *Job, m map[string]any) error { got = m; return nil })
		if err := h.Handle(t.Context(), &Job{Payload: []byte(`{"a":"b"}`)}); err != nil {
			t.Fatal(err)
		}
		if got["a"] != "b" {
			t.Fatalf("got %v; want map[a:b]", got)
		}
	})
}

func TestRegistryRegisterErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		queue     string
		h         Handler
		opts      QueueOptions
		wantField string // "" when the error is not a *ValidationError
		wantInErr []string
	}{
		{"empty queue", "", noopJobHandler, QueueOptions{}, "Queue", []string{"empty"}},
		{"queue with braces", "a{b}", noopJobHandler, QueueOptions{}, "Queue", []string{"'{'"}},
		{"queue with colon", "a:b", noopJobHandler, QueueOptions{}, "Queue", nil},
		{"nil handler", "q", nil, QueueOptions{}, "Handler", []string{"nil", `"q"`}},
		{"negative concurrency", "q", noopJobHandler, QueueOptions{Concurrency: -1}, "Concurrency", []string{"Concurrency", "-1", `"q"`}},
		{"concurrency above 10000", "q", noopJobHandler, QueueOptions{Concurrency: 10001}, "Concurrency", []string{"Concurrency", "10001"}},
		{"negative max attempts", "q", noopJobHandler, QueueOptions{MaxAttempts: -1}, "MaxAttempts", []string{"MaxAttempts", "-1"}},
		{"negative timeout", "q", noopJobHandler, QueueOptions{Timeout: -time.Second}, "Timeout", []string{"Timeout", "-1s"}},
		{"timeout below 1ms", "q", noopJobHandler, QueueOptions{Timeout: 500 * time.Microsecond}, "Timeout", []string{"Timeout", "500µs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NewRegistry()
			err := r.Register(tt.queue, tt.h, tt.opts)
			requireInvalidField(t, err, tt.wantField, tt.wantInErr...)
			if q := r.Queues(); len(q) != 0 {
				t.Fatalf("Queues() = %q after a failed Register; want none", q)
			}
		})
	}
}

func TestRegistryRegisterDuplicate(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	if err := r.Register("q", noopJobHandler, QueueOptions{}); err != nil {
		t.Fatal(err)
	}
	second := HandlerFunc(func(context.Context, *Job) error { return io.EOF })
	err := r.Register("q", second, QueueOptions{Concurrency: 3})
	if err == nil {
		t.Fatal("second Register of q = nil; want an error")
	}
	if !strings.Contains(err.Error(), `"q"`) {
		t.Errorf("err = %q; want it to name the queue", err)
	}
	reg, ok := r.lookup("q")
	if !ok {
		t.Fatal("lookup(q) found nothing")
	}
	if reg.opts.Concurrency != ConcurrencyDefault {
		t.Fatalf("Concurrency = %d after the duplicate; want the first registration's %d", reg.opts.Concurrency, ConcurrencyDefault)
	}
	if err := reg.handler.Handle(t.Context(), &Job{}); err != nil {
		t.Fatalf("the duplicate replaced the first handler (Handle = %v)", err)
	}
}

func TestRegistryRegisterOptions(t *testing.T) {
	t.Parallel()
	steps := FixedSteps{time.Second}
	tests := []struct {
		name string
		opts QueueOptions
		want QueueOptions
	}{
		{
			name: "defaults",
			opts: QueueOptions{},
			want: QueueOptions{Concurrency: 10, MaxAttempts: 25, Timeout: 30 * time.Minute, Backoff: ExponentialBackoff{}},
		},
		{
			name: "kept",
			opts: QueueOptions{Concurrency: 1, MaxAttempts: 1, Timeout: time.Millisecond, Backoff: steps},
			want: QueueOptions{Concurrency: 1, MaxAttempts: 1, Timeout: time.Millisecond, Backoff: steps},
		},
		{
			name: "largest concurrency",
			opts: QueueOptions{Concurrency: 10000},
			want: QueueOptions{Concurrency: 10000, MaxAttempts: 25, Timeout: 30 * time.Minute, Backoff: ExponentialBackoff{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NewRegistry()
			if err := r.Register("q", noopJobHandler, tt.opts); err != nil {
				t.Fatalf("Register = %v", err)
			}
			reg, ok := r.lookup("q")
			if !ok {
				t.Fatal("lookup(q) found nothing")
			}
			got := reg.opts
			if got.Concurrency != tt.want.Concurrency || got.MaxAttempts != tt.want.MaxAttempts || got.Timeout != tt.want.Timeout {
				t.Fatalf("opts = %+v; want %+v", got, tt.want)
			}
			if fmt.Sprintf("%T %v", got.Backoff, got.Backoff) != fmt.Sprintf("%T %v", tt.want.Backoff, tt.want.Backoff) {
				t.Fatalf("Backoff = %T %v; want %T %v", got.Backoff, got.Backoff, tt.want.Backoff, tt.want.Backoff)
			}
			if reg.handler == nil {
				t.Fatal("handler is nil")
			}
		})
	}
}

func TestRegistryQueuesSorted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		queues []string
		want   []string
	}{
		{"empty", nil, []string{}},
		{"one", []string{"a"}, []string{"a"}},
		{"byte order", []string{"b", "a", "C", "a.1", "_", "9"}, []string{"9", "C", "_", "a", "a.1", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := NewRegistry()
			for _, q := range tt.queues {
				if err := r.Register(q, noopJobHandler, QueueOptions{}); err != nil {
					t.Fatalf("Register(%q) = %v", q, err)
				}
			}
			got := r.Queues()
			if got == nil || !slices.Equal(got, tt.want) {
				t.Fatalf("Queues() = %#v; want %#v", got, tt.want)
			}
			// The result is a copy: changing it does not change the registry.
			if len(got) > 0 {
				got[0] = "changed"
				if again := r.Queues(); !slices.Equal(again, tt.want) {
					t.Fatalf("Queues() = %q after changing an earlier result; want %q", again, tt.want)
				}
			}
		})
	}
}

func TestRegistryConcurrentRegister(t *testing.T) {
	t.Parallel()
	r := NewRegistry()
	const n = 64
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = r.Register(fmt.Sprintf("q%02d", i%(n/2)), noopJobHandler, QueueOptions{})
			_ = r.Queues()
		})
	}
	wg.Wait()
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed != n/2 {
		t.Fatalf("%d Register calls failed; want %d (one per duplicated name)", failed, n/2)
	}
	if got := len(r.Queues()); got != n/2 {
		t.Fatalf("%d queues; want %d", got, n/2)
	}
}

func TestPermanent(t *testing.T) {
	t.Parallel()
	errInner := errors.New("card declined")
	tests := []struct {
		name     string
		err      error
		wantNil  bool
		wantText string
	}{
		{"nil", nil, true, ""},
		{"plain", errInner, false, "permanent: card declined"},
		{"wrapped", fmt.Errorf("charge: %w", errInner), false, "permanent: charge: card declined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := Permanent(tt.err)
			if tt.wantNil {
				if got != nil {
					t.Fatalf("Permanent(nil) = %#v; want a nil error", got)
				}
				return
			}
			if !errors.Is(got, errInner) {
				t.Fatalf("errors.Is(Permanent(err), inner) = false; want true")
			}
			var perm *PermanentError
			if !errors.As(got, &perm) || perm.Err != tt.err { //nolint:errorlint // the very error given
				t.Fatalf("Permanent(err) = %#v; want a *PermanentError wrapping err", got)
			}
			if got.Error() != tt.wantText {
				t.Fatalf("Error() = %q; want %q", got.Error(), tt.wantText)
			}
			// Still found when a caller wraps it again.
			if !errors.As(fmt.Errorf("outer: %w", got), &perm) {
				t.Fatal("errors.As through another wrap = false; want true")
			}
		})
	}
}

func TestSnooze(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		d    time.Duration
		want time.Duration
	}{
		{"positive", time.Minute, time.Minute},
		{"zero", 0, 0},
		{"negative counts as zero", -time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := Snooze(tt.d)
			var s *SnoozeError
			if !errors.As(err, &s) {
				t.Fatalf("Snooze(%s) = %#v; want a *SnoozeError", tt.d, err)
			}
			if s.Delay != tt.want {
				t.Fatalf("Delay = %s; want %s", s.Delay, tt.want)
			}
			if want := "snoozed for " + tt.want.String(); err.Error() != want {
				t.Fatalf("Error() = %q; want %q", err, want)
			}
		})
	}
}

func TestPanicErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		value any
		want  string
	}{
		{"string", "oops", "handler panic: oops"},
		{"error", errors.New("bad"), "handler panic: bad"},
		{"int", 42, "handler panic: 42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := (&PanicError{Value: tt.value}).Error(); got != tt.want {
				t.Fatalf("Error() = %q; want %q", got, tt.want)
			}
		})
	}
}
