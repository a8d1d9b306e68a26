package worker_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestMetricsAfterKnownJobs runs a known sequence of jobs through a Daemon
// and a Client sharing one registry, then checks the values of the job,
// queue, leader, lock and Redis metrics, and lints the registry.
func TestMetricsAfterKnownJobs(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig(t, testkit.Prefix(t))
	cfg.Registerer = reg
	cfg.LeaderLease = 600 * time.Millisecond // renewed every 200ms
	c := newClient(t, rdb, cfg)

	// By payload: "ok" succeeds after 20ms; "flaky" fails once then succeeds;
	// "bad" fails for good; "later" snoozes once.
	var snoozed atomic.Bool
	handler := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
		switch string(job.Payload) {
		case "ok":
			time.Sleep(20 * time.Millisecond) //nolint:forbidigo // the handler's work: the duration histogram is checked against it
			return nil
		case "flaky":
			if job.Attempt == 1 {
				return errors.New("first attempt fails")
			}
			return nil
		case "bad":
			return worker.Permanent(errors.New("never works"))
		case "later":
			if snoozed.CompareAndSwap(false, true) {
				return worker.Snooze(10 * time.Millisecond)
			}
			return nil
		}
		return nil
	})
	opts := worker.QueueOptions{Concurrency: 3, Backoff: worker.FixedSteps{10 * time.Millisecond}}
	d := startDaemon(t, rdb, register(t, nil, "m", handler, opts), cfg)

	var jobs []worker.JobSpec
	for range 5 {
		jobs = append(jobs, worker.JobSpec{Queue: "m", Payload: []byte("ok")})
	}
	jobs = append(jobs,
		worker.JobSpec{Queue: "m", Payload: []byte("flaky")},
		worker.JobSpec{Queue: "m", Payload: []byte("bad")},
		worker.JobSpec{Queue: "m", Payload: []byte("later")},
		worker.JobSpec{Queue: "m", ID: "dup", Payload: []byte("ok"), Delay: time.Hour},
	)
	enqueueAll(t, c, jobs)
	if _, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: "m", ID: "dup"}); !errors.Is(err, worker.ErrDuplicate) {
		t.Fatalf("second enqueue of dup: %v, want ErrDuplicate", err)
	}

	value := func(name string, labels ...string) float64 {
		t.Helper()
		return testkit.Metric(t, reg, name, labels...)
	}
	// 8 jobs run: 5 ok + flaky (retry, success) + bad (dead) + later
	// (snooze, success) = 7 successes.
	testkit.Eventually(t, 15*time.Second, "every job to end", func() bool {
		return value("courier_jobs_processed_total", "queue", "m", "outcome", "success") == 7 &&
			value("courier_jobs_processed_total", "queue", "m", "outcome", "dead") == 1
	})
	testkit.Eventually(t, 5*time.Second, "the leader to sample the queue", func() bool {
		return value("courier_queue_jobs", "queue", "m", "state", "scheduled") == 1 &&
			value("courier_queue_jobs", "queue", "m", "state", "dead") == 1
	})
	testkit.Eventually(t, 5*time.Second, "a renewal of the leader lock", func() bool {
		return value("courier_lock_renewals_total", "lock", "m:leader", "result", "ok") >= 1
	})

	want := map[string]float64{
		`courier_jobs_enqueued_total{queue="m"}`:                        9, // the duplicate is not counted
		`courier_jobs_processed_total{outcome="success",queue="m"}`:     7,
		`courier_jobs_processed_total{outcome="retry",queue="m"}`:       1,
		`courier_jobs_processed_total{outcome="snooze",queue="m"}`:      1,
		`courier_jobs_processed_total{outcome="dead",queue="m"}`:        1,
		`courier_jobs_processed_total{outcome="cancelled",queue="m"}`:   0,
		`courier_jobs_running{queue="m"}`:                               0,
		`courier_queue_concurrency{queue="m"}`:                          3,
		`courier_queue_jobs{queue="m",state="ready"}`:                   0,
		`courier_queue_jobs{queue="m",state="active"}`:                  0,
		`courier_leader{queue="m"}`:                                     1,
		`courier_lock_renewals_total{lock="m:leader",result="lost"}`:    0,
		`courier_lock_renewals_total{lock="m:leader",result="error"}`:   0,
		`courier_lock_contention_total{lock="m:leader"}`:                0,
		`courier_redis_errors_total{op="claim"}`:                        0,
		`courier_redis_errors_total{op="enqueue"}`:                      0,
		`courier_job_duration_seconds_count{queue="m"}`:                 10, // attempts run
		`courier_job_lag_seconds_count{queue="m"}`:                      10,
		`courier_lock_acquire_seconds_count{lock="m:leader"}`:           1,
		`courier_redis_script_seconds_count{script="lock_acquire"}`:     -1, // >= 1
		`courier_redis_script_seconds_count{script="claim"}`:            -1,
		`courier_redis_script_seconds_count{script="enqueue"}`:          -1,
		`courier_redis_script_seconds_count{script="ack"}`:              -1,
		`courier_redis_script_seconds_count{script="retry"}`:            -1,
		`courier_redis_script_seconds_count{script="snooze"}`:           -1,
		`courier_redis_script_seconds_count{script="stats"}`:            -1,
		`courier_lock_renewals_total{lock="m:leader",result="ok"}`:      -1,
		`courier_job_duration_seconds_bucket{le="0.025",queue="m"}`:     -1,
		`courier_redis_script_seconds_bucket{le="0.0001",script="get"}`: 0,
	}
	got := testkit.Series(t, reg)
	for series, w := range want {
		g, ok := got[series]
		switch {
		case !ok:
			t.Errorf("%s missing", series)
		case w >= 0 && g != w:
			t.Errorf("%s = %v, want %v", series, g, w)
		case w < 0 && g < 1:
			t.Errorf("%s = %v, want at least 1", series, g)
		}
	}
	// Only the 5 "ok" attempts slept 20ms: the others are below 25ms too,
	// so the 10ms bucket holds the five fast attempts at most.
	if fast := got[`courier_job_duration_seconds_bucket{le="0.01",queue="m"}`]; fast > 5 {
		t.Errorf("%v attempts under 10ms, but only 5 of 10 were fast", fast)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("GatherAndLint: %v %+v", err, problems)
	}

	// A stopped daemon no longer claims to run handlers for the queue.
	if err := d.Stop(t, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	got = testkit.Series(t, reg)
	if _, ok := got[`courier_queue_concurrency{queue="m"}`]; ok {
		t.Error("courier_queue_concurrency still reported after the daemon stopped")
	}
	if v := got[`courier_leader{queue="m"}`]; v != 0 {
		t.Errorf("courier_leader = %v after the daemon stopped", v)
	}
}
