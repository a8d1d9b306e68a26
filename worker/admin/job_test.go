package admin_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/internal/workertest"
)

// TestJobsAsGet: a job listed by Jobs is the job Get reads, field for
// field, in every state: the listing maps a record as worker.Client.Get
// does (admin's jobOf and worker's jobFromRecord).
func TestJobsAsGet(t *testing.T) {
	t.Parallel()
	workertest.ForEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		ctx := t.Context()
		cfg := workertest.Config(t, prefix)
		c := workertest.NewClient(t, rdb, cfg)
		release := make(chan struct{})
		t.Cleanup(func() { close(release) })
		h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			switch job.ID {
			case "dies":
				return worker.Permanent(errors.New("no such customer"))
			case "runs":
				if err := job.ReportProgress(40, "halfway"); err != nil {
					return err
				}
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			}
			return job.SetResult([]byte(`{"ok":true}`))
		})
		reg := workertest.Register(t, nil, "q", h, worker.QueueOptions{RetainCompleted: worker.Retention{Count: 10}})
		full := func(id string) worker.JobSpec {
			return worker.JobSpec{
				Queue: "q", ID: id, Payload: []byte(`{"n":1}`), MaxAttempts: 3, Timeout: time.Minute,
				Priority: worker.PriorityHigh, UniqueKey: "k-" + id, UniqueFor: time.Hour,
				Headers: map[string]string{"tenant": "acme"},
			}
		}
		later := full("later")
		later.Delay = time.Hour
		for _, spec := range []worker.JobSpec{full("dies"), full("runs"), full("done"), later} {
			workertest.Enqueue(t, c, spec)
		}
		workertest.StartDaemon(t, rdb, reg, cfg)
		testkit.Eventually(t, 10*time.Second, "a job in every state", func() bool {
			s := workertest.Stats(t, c, "q")
			return s.Dead == 1 && s.Active == 1 && s.Completed == 1 && s.Scheduled == 1
		})
		testkit.Eventually(t, 10*time.Second, "the progress to be stored", func() bool {
			return workertest.GetJob(t, c, "q", "runs").Progress != nil
		})
		paused := full("ready")
		if err := c.Pause(ctx, "q"); err != nil {
			t.Fatal(err)
		}
		workertest.Enqueue(t, c, paused)
		for _, state := range []worker.State{worker.StateScheduled, worker.StateReady, worker.StateActive, worker.StateDead, worker.StateCompleted} {
			jobs, _ := workertest.ListAll(t, c, admin.JobListParams{Queue: "q", State: state})
			if len(jobs) != 1 {
				t.Fatalf("Jobs(%s) = %d jobs, want 1", state, len(jobs))
			}
			listed, got := jobs[0], workertest.GetJob(t, c, "q", jobs[0].ID)
			listed.LeaseUntil, got.LeaseUntil = time.Time{}, time.Time{} // renewed between the two reads
			if !reflect.DeepEqual(listed, got) {
				t.Errorf("%s: Jobs lists\n%+v\nGet reads\n%+v", state, listed, got)
			}
			if listed.Headers["tenant"] != "acme" {
				t.Errorf("%s: listed %+v without its headers", state, listed)
			}
			// A finished job's options (priority, unique key) are gone
			// with its unique key; the others keep them.
			if state != worker.StateCompleted && (listed.UniqueKey == "" || listed.Priority != worker.PriorityHigh) {
				t.Errorf("%s: listed %+v without its unique key or priority", state, listed)
			}
		}
	})
}
