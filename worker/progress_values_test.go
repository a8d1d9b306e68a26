package worker_test

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestProgressEdgeValues: a handler reporting the percents at the edges of
// the rule (-0, a subnormal, what rounds to 100; issue 29, item 7) keeps
// its lease renewed and finishes once: Go and extend.lua agree on what is
// valid, so no report fails a renewal. Out of range is refused in Go, by
// name.
func TestProgressEdgeValues(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix) // lease 300ms: an extension every 100ms
		var runs atomic.Int32
		release := make(chan struct{})
		cause := make(chan error, 4)
		h := func(ctx context.Context, job *worker.Job) error {
			runs.Add(1)
			if err := job.ReportProgress(100.0000001, ""); !errors.Is(err, worker.ErrInvalid) {
				t.Errorf("ReportProgress(100.0000001) = %v, want a ValidationError", err)
			}
			for _, pct := range []float64{math.Copysign(0, -1), 1e-320, 99.999, math.Copysign(0, -1)} {
				if err := job.ReportProgress(pct, "edge"); err != nil {
					t.Errorf("ReportProgress(%v) = %v", pct, err)
				}
				// each report rides an extension of its own
				select {
				case <-time.After(cfg.Lease / 2):
				case <-ctx.Done():
				}
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			cause <- context.Cause(ctx)
			return ctx.Err()
		}
		reg := register(t, nil, "edges", worker.HandlerFunc(h), worker.QueueOptions{})
		c := newClient(t, rdb, cfg)
		startDaemon(t, rdb, reg, cfg)
		id := enqueue(t, c, worker.JobSpec{Queue: "edges"})

		testkit.Eventually(t, 10*time.Second, "the last report (-0) stored as 0", func() bool {
			p := getJob(t, c, "edges", id).Progress
			return p != nil && p.Percent == 0 && !math.Signbit(p.Percent) && p.Message == "edge" &&
				time.Since(p.UpdatedAt) < time.Minute && runs.Load() == 1
		})
		time.Sleep(3 * cfg.Lease) //nolint:forbidigo // renewals go on: the lease, on the real clock, would run out without them
		close(release)
		testkit.Eventually(t, 10*time.Second, "the job acked", func() bool { return isGone(t, c, "edges", id) })
		if err := receive(t, cause, 5*time.Second, "the handler's end"); err != nil {
			t.Errorf("the handler's context ended: %v; want its lease renewed throughout", err)
		}
		if n := runs.Load(); n != 1 {
			t.Errorf("the job ran %d times, want once", n)
		}
	})
}
