package asynqcompat_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/asynqcompat"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// TestHandlerRunsServeMux runs an asynq ServeMux under a Courier daemon,
// on a single Redis and a Cluster: jobs route by kind, SkipRetry kills,
// RevokeTask ends without a dead entry, a plain error retries, a write
// through the nil ResultWriter dies naming the cause, and JobOf gives the
// job.
func TestHandlerRunsServeMux(t *testing.T) {
	t.Parallel()
	for _, b := range []struct {
		name    string
		connect func(testing.TB) rueidis.Client
	}{{"single", testkit.Single}, {"cluster", testkit.Cluster}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			rdb := b.connect(t)
			cfg := worker.Config{Prefix: testkit.Prefix(t)}
			const q = "mail"
			var mu sync.Mutex
			got := map[string]string{}
			tries := 0
			mux := asynq.NewServeMux()
			mux.HandleFunc("email:deliver", func(ctx context.Context, task *asynq.Task) error {
				job, ok := asynqcompat.JobOf(ctx)
				if !ok {
					return errors.New("no job in the context")
				}
				mu.Lock()
				defer mu.Unlock()
				got[job.ID] = task.Type() + " " + string(task.Payload()) + " " + task.Headers()["x-tenant"]
				return nil
			})
			mux.HandleFunc("email:bounce", func(context.Context, *asynq.Task) error {
				return fmt.Errorf("mailbox gone: %w", asynq.SkipRetry)
			})
			mux.HandleFunc("email:revoke", func(context.Context, *asynq.Task) error { return asynq.RevokeTask })
			mux.HandleFunc("email:flaky", func(context.Context, *asynq.Task) error {
				mu.Lock()
				defer mu.Unlock()
				if tries++; tries == 1 {
					return errors.New("try later")
				}
				return nil
			})
			mux.HandleFunc("email:result", func(_ context.Context, task *asynq.Task) error {
				_, err := task.ResultWriter().Write([]byte("done"))
				return err
			})
			reg := worker.NewRegistry()
			if err := reg.Register(q, asynqcompat.Handler(mux), worker.QueueOptions{
				Concurrency: 4, MaxAttempts: 3, Backoff: worker.FixedSteps{10 * time.Millisecond},
				RetainCompleted: worker.Retention{Count: 100},
			}); err != nil {
				t.Fatal(err)
			}
			c, err := worker.NewClient(rdb, cfg)
			if err != nil {
				t.Fatal(err)
			}
			specs := []worker.JobSpec{
				{Queue: q, ID: "ok", Kind: "email:deliver", Payload: []byte("hi"), Headers: map[string]string{"x-tenant": "acme"}},
				{Queue: q, ID: "bounce", Kind: "email:bounce"},
				{Queue: q, ID: "revoke", Kind: "email:revoke"},
				{Queue: q, ID: "flaky", Kind: "email:flaky"},
				{Queue: q, ID: "result", Kind: "email:result"},
				{Queue: q, ID: "unknown", Kind: "sms:send"},
			}
			if _, err := c.EnqueueMany(t.Context(), specs); err != nil {
				t.Fatal(err)
			}
			d, err := worker.NewDaemon(rdb, reg, cfg)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- d.Run(ctx) }()
			defer func() { cancel(); <-done }()
			state := func(id string) *worker.Job {
				j, err := c.Get(t.Context(), q, id)
				if err != nil {
					return &worker.Job{}
				}
				return j
			}
			testkit.Eventually(t, 20*time.Second, "every job to end", func() bool {
				for _, s := range specs {
					if st := state(s.ID).State; st != worker.StateCompleted && st != worker.StateDead {
						return false
					}
				}
				return true
			})
			mu.Lock()
			if got["ok"] != "email:deliver hi acme" {
				t.Errorf("email:deliver saw %q", got["ok"])
			}
			mu.Unlock()
			for id, want := range map[string]worker.State{"ok": worker.StateCompleted, "bounce": worker.StateDead, "revoke": worker.StateCompleted,
				"flaky": worker.StateCompleted, "result": worker.StateDead, "unknown": worker.StateDead} {
				if j := state(id); j.State != want {
					t.Errorf("%s: %s (%q), want %s", id, j.State, j.LastError, want)
				}
			}
			if j := state("bounce"); j.Attempt != 1 || !strings.Contains(j.LastError, "mailbox gone") {
				t.Errorf("bounce: attempt %d, error %q: SkipRetry should kill at once", j.Attempt, j.LastError)
			}
			if j := state("flaky"); j.Attempt != 2 {
				t.Errorf("flaky: attempt %d, want 2", j.Attempt)
			}
			if j := state("result"); j.Attempt != 1 || !strings.Contains(j.LastError, "ResultWriter") {
				t.Errorf("result: attempt %d, error %q", j.Attempt, j.LastError)
			}
		})
	}
}
