package worker_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestProgressShownWhileTheJobRuns: a handler's report shows in Get and
// List within a lease extension, with the process that runs the job; bad
// reports are refused with the field named; the progress is gone once the
// attempt ended.
func TestProgressShownWhileTheJobRuns(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix) // lease 300ms: an extension every 100ms
		release := make(chan struct{})
		errs := make(chan []error, 1)
		h := func(ctx context.Context, job *worker.Job) error {
			var bad []error
			for _, r := range []struct {
				pct float64
				msg string
			}{{-1, ""}, {100.5, ""}, {math.NaN(), ""}, {5, strings.Repeat("m", worker.MaxProgressMessageLen+1)}, {5, "a\x00b"}} {
				bad = append(bad, job.ReportProgress(r.pct, r.msg))
			}
			bad = append(bad, job.SetResult(make([]byte, cfg.MaxResultBytes+1)))
			errs <- bad
			if err := job.ReportProgress(12.345, "copying files"); err != nil {
				return err
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return nil
		}
		cfg.MaxResultBytes = 100
		reg := register(t, nil, "pq", worker.HandlerFunc(h), worker.QueueOptions{})
		c := newClient(t, rdb, cfg)
		d := startDaemon(t, rdb, reg, cfg)
		id := enqueue(t, c, worker.JobSpec{Queue: "pq"})

		fields := []string{"Percent", "Percent", "Percent", "Message", "Message", "Result"}
		for i, err := range receive(t, errs, 10*time.Second, "the handler's checks") {
			var ve *worker.ValidationError
			if !errors.As(err, &ve) || ve.Field != fields[i] {
				t.Errorf("bad report %d: %v, want a ValidationError of %s", i, err, fields[i])
			}
		}
		var job *worker.Job
		testkit.Eventually(t, 5*time.Second, "the progress stored", func() bool {
			job = getJob(t, c, "pq", id)
			return job.Progress != nil
		})
		if p := job.Progress; p.Percent != 12.35 || p.Message != "copying files" || time.Since(p.UpdatedAt) > time.Minute || job.Worker != d.ID() || job.State != worker.StateActive {
			t.Errorf("job %+v progress %+v, want 12.35%% \"copying files\" now, worker %s", job, p, d.ID())
		}
		page, err := c.Jobs(t.Context(), admin.JobListParams{Queue: "pq", State: worker.StateActive})
		if err != nil || len(page.Jobs) != 1 || page.Jobs[0].Progress == nil || page.Jobs[0].Progress.Percent != 12.35 {
			t.Errorf("List active = %+v, %v; want the job with its progress", page, err)
		}
		close(release)
		testkit.Eventually(t, 5*time.Second, "the job acked", func() bool { return isGone(t, c, "pq", id) })

		if err := getJobOrNil(t, c); !errors.Is(err, worker.ErrNotRunning) {
			t.Errorf("ReportProgress on a Job from Get = %v, want ErrNotRunning", err)
		}
	})
}

// getJobOrNil reports progress on a Job that no handler runs.
func getJobOrNil(t *testing.T, c *client) error {
	t.Helper()
	id := enqueue(t, c, worker.JobSpec{Queue: "idle"})
	return errors.Join(getJob(t, c, "idle", id).ReportProgress(1, ""), getJob(t, c, "idle", id).SetResult(nil))
}
