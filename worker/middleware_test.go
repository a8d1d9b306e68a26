package worker_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// trail records the order middleware and handlers ran in.
type trail struct {
	mu    sync.Mutex
	steps []string
}

func (tr *trail) add(s string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.steps = append(tr.steps, s)
}

func (tr *trail) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.steps)
}

// mark is a middleware that records name on the way in, and whether the
// attempt's timeout applies to it (the Daemon's own layers are outside).
func (tr *trail) mark(name string) worker.Middleware {
	return func(next worker.Handler) worker.Handler {
		return worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			if _, ok := ctx.Deadline(); !ok {
				tr.add(name + " without the timeout")
			}
			tr.add(name)
			return next.Handle(ctx, job)
		})
	}
}

// TestMiddleware: Registry.Use wraps every queue's handler, registered
// before or after the call, first given outermost, inside the attempt's
// timeout; a handler wrapped at Register has its own middleware inside
// the Registry's.
func TestMiddleware(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		var tr trail
		done := make(chan string, 2)
		handler := func(name string) worker.HandlerFunc {
			return func(ctx context.Context, job *worker.Job) error {
				tr.add(name)
				done <- job.Queue
				return nil
			}
		}
		reg := worker.NewRegistry()
		register(t, reg, "before", handler("handler before"), worker.QueueOptions{Partitions: 2})
		reg.Use(tr.mark("a"), tr.mark("b"))
		register(t, reg, "after", tr.mark("own")(handler("handler after")), worker.QueueOptions{})
		reg.Use(tr.mark("c"))
		startDaemon(t, rdb, reg, cfg)

		enqueue(t, c, worker.JobSpec{Queue: "before"})
		receive(t, done, 10*time.Second, "the job of queue before")
		enqueue(t, c, worker.JobSpec{Queue: "after"})
		receive(t, done, 10*time.Second, "the job of queue after")
		want := []string{"a", "b", "c", "handler before", "a", "b", "c", "own", "handler after"}
		if got := tr.get(); !slices.Equal(got, want) {
			t.Errorf("ran %q, want %q", got, want)
		}
	})
}

// TestMiddlewarePanicPolicy: by default a panic is a failed attempt,
// retried; a middleware that turns it into Permanent sends the job to the
// dead set at once; a panic in a middleware itself is a failed attempt.
func TestMiddlewarePanicPolicy(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		crash := worker.HandlerFunc(func(context.Context, *worker.Job) error { panic("boom") })
		opts := worker.QueueOptions{MaxAttempts: 3, Backoff: worker.FixedSteps{time.Hour}}
		reg := register(t, nil, "default", crash, opts)
		register(t, reg, "permanent", panicsArePermanent(crash), opts)
		register(t, reg, "outside", func(next worker.Handler) worker.Handler {
			return worker.HandlerFunc(func(context.Context, *worker.Job) error { panic("in the middleware") })
		}(worker.HandlerFunc(succeed)), opts)
		startDaemon(t, rdb, reg, cfg)

		for _, tt := range []struct {
			queue string
			state worker.State
			text  string
		}{
			{"default", worker.StateScheduled, "handler panic: boom"},
			{"permanent", worker.StateDead, "handler panic: boom"},
			{"outside", worker.StateScheduled, "handler panic: in the middleware"},
		} {
			id := enqueue(t, c, worker.JobSpec{Queue: tt.queue})
			testkit.Eventually(t, 10*time.Second, fmt.Sprintf("job of %s to be %s", tt.queue, tt.state),
				func() bool { return inState(t, c, tt.queue, id, tt.state) })
			if job := getJob(t, c, tt.queue, id); job.Attempt != 1 || !strings.Contains(job.LastError, tt.text) {
				t.Errorf("queue %s: attempt %d, last error %q; want 1 and %q", tt.queue, job.Attempt, job.LastError, tt.text)
			}
		}
	})
}

// TestMiddlewareErrors: NewDaemon refuses a nil middleware and one that
// returns a nil Handler, naming it.
func TestMiddlewareErrors(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	cfg := testConfig(t, testkit.Prefix(t))
	ok := func(next worker.Handler) worker.Handler { return next }
	for _, tt := range []struct {
		name string
		mw   []worker.Middleware
		want string
	}{
		{"nil", []worker.Middleware{ok, nil}, "middleware 1 is nil"},
		{"nil handler", []worker.Middleware{func(worker.Handler) worker.Handler { return nil }}, `middleware 0 returned a nil Handler for queue "q"`},
		{"nil func", []worker.Middleware{func(worker.Handler) worker.Handler { return worker.HandlerFunc(nil) }}, "middleware 0 returned a nil Handler"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			reg := register(t, nil, "q", worker.HandlerFunc(succeed), worker.QueueOptions{})
			reg.Use(tt.mw...)
			_, err := worker.NewDaemon(rdb, reg, cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("NewDaemon = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
