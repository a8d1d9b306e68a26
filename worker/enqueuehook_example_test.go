package worker_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// tenantHeader is an enqueue hook that gives every job the tenant of the
// request that enqueues it, the header tenantFromHeader reads back when
// the job runs. A job enqueued outside any tenant's request is refused.
func tenantHeader(ctx context.Context, spec *worker.JobSpec) error {
	tenant, _ := ctx.Value(tenantKey{}).(string)
	if tenant == "" {
		return errors.New("no tenant in the context")
	}
	if spec.Headers == nil {
		spec.Headers = map[string]string{}
	}
	spec.Headers["tenant"] = tenant
	return nil
}

// A Client runs its hooks on every job it enqueues, in the order Use got
// them, before it validates the job: client.Use(tenantHeader). A hook is a
// function of a context and a spec, so a test calls it by hand, as the
// Client does.
func ExampleEnqueueHook() {
	ctx := context.WithValue(context.Background(), tenantKey{}, "acme")
	spec := worker.JobSpec{Queue: "reports", Payload: []byte("monthly")}
	fmt.Println(tenantHeader(ctx, &spec), spec.Headers)
	fmt.Println(tenantHeader(context.Background(), &worker.JobSpec{Queue: "reports"}))
	// Output:
	// <nil> map[tenant:acme]
	// no tenant in the context
}

// Report is the payload of the "reports" queue's jobs.
type Report struct {
	Kind string `json:"kind"`
}

// A periodic job of a JSONHandler[T] queue gets its payload from a T with
// PeriodicJSON; Register refuses a periodic payload the handler could not
// decode, which would fail on every fire.
func ExamplePeriodicJSON() {
	h := worker.JSONHandler(func(ctx context.Context, job *worker.Job, r Report) error { return nil })
	reg := worker.NewRegistry()
	err := reg.Register("reports", h, worker.QueueOptions{Periodic: []worker.Periodic{
		worker.PeriodicJSON(worker.Periodic{Name: "nightly", Cron: "0 3 * * *"}, Report{Kind: "daily"}),
		{Name: "weekly", Cron: "0 4 * * 1", Payload: []byte(`{"kind":"weekly"}`)},
		{Name: "typo", Every: time.Hour, Payload: []byte(`{"knid":"hourly"}`)},
	}})
	var ve *worker.ValidationError
	if errors.As(err, &ve) {
		fmt.Printf("%s: %s\n", ve.Field, ve.Reason)
	}
	// Output: Periodic[2].Payload: does not decode into worker_test.Report: json: unknown field "knid"
}
