package worker_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// logging is a middleware that logs each attempt's end and how long it
// ran; it runs inside the attempt's span, so a log handler that reads the
// span from ctx ties the line to the trace.
func logging(log *slog.Logger) worker.Middleware {
	return func(next worker.Handler) worker.Handler {
		return worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			start := time.Now()
			err := next.Handle(ctx, job)
			log.InfoContext(ctx, "attempt ended", "queue", job.Queue, "job", job.ID,
				"attempt", job.Attempt, "err", err, "took", time.Since(start).Round(time.Second))
			return err
		})
	}
}

// tenantKey is the context key of the tenant a job runs for.
type tenantKey struct{}

// tenantFromHeader is a middleware that puts the job's "tenant" header
// into the context, where the handler (and the code it calls) finds it.
// A job without one is refused for good: no retry would add it.
func tenantFromHeader(next worker.Handler) worker.Handler {
	return worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		tenant := job.Headers["tenant"]
		if tenant == "" {
			return worker.Permanent(fmt.Errorf("job %s has no tenant header", job.ID))
		}
		return next.Handle(context.WithValue(ctx, tenantKey{}, tenant), job)
	})
}

// panicsArePermanent is a panic policy: by default a panic is a failed
// attempt, retried like an error; with this middleware a job whose
// handler panics goes to the dead set at once.
func panicsArePermanent(next worker.Handler) worker.Handler {
	return worker.HandlerFunc(func(ctx context.Context, job *worker.Job) (err error) {
		defer func() {
			if v := recover(); v != nil {
				err = worker.Permanent(&worker.PanicError{Value: v, Stack: debug.Stack()})
			}
		}()
		return next.Handle(ctx, job)
	})
}

// Middleware added with Registry.Use wraps the handler of every queue,
// the first given outermost; a middleware for one queue wraps that
// queue's handler at Register, inside the Registry's. A middleware is a
// function of a Handler, so a test applies it by hand, as the Daemon does.
func ExampleRegistry_Use() {
	report := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		if string(job.Payload) == "yearly" {
			panic("not implemented")
		}
		fmt.Printf("report %s for tenant %v\n", job.Payload, ctx.Value(tenantKey{}))
		return nil
	})
	reg := worker.NewRegistry()
	reg.Use(tenantFromHeader, panicsArePermanent) // every queue: the tenant, then the panic policy
	if err := reg.Register("reports", report, worker.QueueOptions{}); err != nil {
		fmt.Println(err)
	}
	// Only the "imports" queue logs its attempts.
	log := slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{} // a steady output for the example
			}
			return a
		},
	}))
	importer := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		return errors.New("row 7: bad date")
	})
	if err := reg.Register("imports", logging(log)(importer), worker.QueueOptions{}); err != nil {
		fmt.Println(err)
	}

	// What the Daemon runs for each queue:
	ctx := context.Background()
	acme := map[string]string{"tenant": "acme"}
	reports := tenantFromHeader(panicsArePermanent(report))
	_ = reports.Handle(ctx, &worker.Job{ID: "r1", Payload: []byte("monthly"), Headers: acme})
	fmt.Println(reports.Handle(ctx, &worker.Job{ID: "r2", Payload: []byte("monthly")}))
	err := reports.Handle(ctx, &worker.Job{ID: "r3", Payload: []byte("yearly"), Headers: acme})
	var pe *worker.PermanentError
	fmt.Println("dead at once:", errors.As(err, &pe), err)

	imports := tenantFromHeader(panicsArePermanent(logging(log)(importer)))
	_ = imports.Handle(ctx, &worker.Job{ID: "i1", Queue: "imports", Attempt: 1, Headers: acme})
	// Output:
	// report monthly for tenant acme
	// permanent: job r2 has no tenant header
	// dead at once: true permanent: handler panic: not implemented
	// level=INFO msg="attempt ended" queue=imports job=i1 attempt=1 err="row 7: bad date" took=0s
}
