package asynqimport

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/hibiken/asynq"

	"github.com/seed-53d105c9/courier/asynqcompat"
	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestImportedJobsRunUnderAsynqServeMux is the migration end to end:
// tasks made by asynq are imported, then a Courier daemon runs them with
// the application's asynq ServeMux through asynqcompat.Handler; each
// pending task runs once, under its type's handler, with its payload.
func TestImportedJobsRunUnderAsynqServeMux(t *testing.T) {
	t.Parallel()
	const q = "e2e"
	backends(t, q, func(t *testing.T, cs courierSide) {
		a := testkit.StartPrivate(t)
		src := a.Client(t)
		s := seed(t, a.Addr, q, 20)
		importOnce(t, src, cs, Options{Apply: true})
		if err := cs.admin.Resume(t.Context(), q); err != nil { // split() paused the partitioned one
			t.Fatal(err)
		}

		var mu sync.Mutex
		ran := map[string]int{}
		mux := asynq.NewServeMux()
		record := func(ctx context.Context, task *asynq.Task) error {
			job, ok := asynqcompat.JobOf(ctx)
			if !ok || job.Kind != task.Type() || len(task.Payload()) == 0 {
				return errors.New("the task is not the job")
			}
			mu.Lock()
			ran[job.ID]++
			mu.Unlock()
			return nil
		}
		mux.HandleFunc("image:resize", record)
		mux.HandleFunc("email:digest", record)
		mux.HandleFunc("video:encode", record)
		reg := worker.NewRegistry()
		parts, err := cs.admin.Partitions(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		if err := reg.Register(q, asynqcompat.Handler(mux), worker.QueueOptions{Concurrency: 8, Partitions: parts}); err != nil {
			t.Fatal(err)
		}
		d, err := worker.NewDaemon(cs.rdb, reg, cs.cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- d.Run(ctx) }()
		defer func() { cancel(); <-done }()
		pending := s.byState["pending"]
		testkit.Eventually(t, 30*time.Second, "every imported pending job to run", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(ran) == len(pending)
		})
		st, err := cs.admin.Stats(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		// the scheduled and retry jobs wait for their hour, the archived stay dead
		if int(st.Scheduled) != len(s.byState["scheduled"])+len(s.byState["retry"]) || int(st.Dead) != len(s.byState["archived"]) || st.Ready != 0 {
			t.Errorf("after the run: %+v", st)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, id := range pending {
			if ran[id] != 1 {
				t.Errorf("job %s ran %d times", id, ran[id])
			}
		}
	})
}
