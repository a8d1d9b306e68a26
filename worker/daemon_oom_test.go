package worker_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestDaemonRunsJobsOnceWhileRedisIsFull fills Redis up (maxmemory
// reached, noeviction) while a job runs, and keeps it full: the job runs
// for many leases, its lease is renewed all along, it is not recovered and
// run again, and its ack is stored, so it finishes once. A second daemon
// starts meanwhile. A producer is
// refused meanwhile with ErrRedisOOM, and the refusal is counted in
// courier_redis_refused_total.
func TestDaemonRunsJobsOnceWhileRedisIsFull(t *testing.T) {
	t.Parallel()
	r := testkit.StartPrivate(t)
	rdb := r.Client(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig(t, testkit.Prefix(t))
	cfg.Registerer = reg
	c := newClient(t, rdb, cfg)
	rec := newRecorder()
	started := make(chan struct{}, 2)
	release := make(chan struct{})
	h := rec.Handler(func(ctx context.Context, _ *worker.Job) error {
		started <- struct{}{}
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	})
	startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{}), cfg)
	id := enqueue(t, c, worker.JobSpec{Queue: "q"})
	receive(t, started, 10*time.Second, "the job to start")

	r.Fill(t)
	// The job outlives its lease (300 ms) several times: ten renewals
	// every lease/3 take a second, while the leader looks for expired
	// leases every 100 ms.
	extends := func() float64 { return testkit.Metric(t, reg, "courier_redis_script_seconds", "script", "extend") }
	before := extends()
	testkit.Eventually(t, 10*time.Second, "ten lease renewals while Redis is full", func() bool { return extends() >= before+10 })

	// A daemon that starts while Redis is full starts: its queue names are
	// recorded already (the cleanup fails the test if its Run failed).
	second := startDaemon(t, rdb, register(t, nil, "q", h, worker.QueueOptions{}), cfg)
	testkit.Eventually(t, 10*time.Second, "the second daemon to start while Redis is full", second.Running)

	_, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "q"})
	if !errors.Is(err, worker.ErrRedisOOM) {
		t.Errorf("Enqueue while Redis is full: %v, want ErrRedisOOM", err)
	} else if msg := err.Error(); !strings.Contains(msg, "out of memory") || !strings.Contains(msg, "refused, nothing stored") {
		t.Errorf("Enqueue's error %q does not say that Redis is out of memory and nothing was stored", msg)
	}
	if n := testkit.Metric(t, reg, "courier_redis_refused_total", "op", "enqueue", "reason", "oom"); n != 1 {
		t.Errorf(`courier_redis_refused_total{op="enqueue",reason="oom"} = %v, want 1`, n)
	}

	close(release)
	testkit.Eventually(t, 5*time.Second, "the finished job's ack while Redis is full", func() bool { return isGone(t, c, "q", id) })
	if calls := rec.Of(id); len(calls) != 1 || calls[0].Err != nil || calls[0].Cause != nil {
		t.Fatalf("handler calls %+v, want one that ran to its end, uncancelled", calls)
	}
	if _, err := r.Do("SET", "probe", "x"); err == nil || !strings.HasPrefix(err.Error(), "OOM") {
		t.Errorf("Redis was not full to the end of the test: SET = %v", err)
	}
}
