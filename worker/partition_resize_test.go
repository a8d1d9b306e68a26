package worker_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// TestPartitionsChangeOnALiveQueue follows the procedure of docs/scaling.md: the
// daemons restart with the new number. Growing keeps every job where it
// is (partition 0 stays); shrinking retires partitions, which refuse new
// jobs (a producer that read the old layout is sent to the new one) and
// are served until empty. No job is lost; jobs of an earlier layout are
// found by id.
func TestPartitionsChangeOnALiveQueue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q = "resize"
		cfg := testConfig(t, prefix)
		producer := newClient(t, rdb, cfg) // keeps the layouts it read
		ctx := t.Context()
		rec := newRecorder()
		run := func(parts int) *daemon {
			reg := register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{Concurrency: 8, Partitions: parts})
			d := startDaemon(t, rdb, reg, cfg)
			waitPartitions(t, newClient(t, rdb, cfg), q, parts)
			return d
		}
		// Scheduled jobs sit in their partitions across the changes.
		later := time.Now().Add(4 * time.Second)
		var all []string
		add := func(tag string, n int) {
			for i := range n {
				id := fmt.Sprintf("%s-%03d", tag, i)
				enqueue(t, producer, worker.JobSpec{Queue: q, ID: id, RunAt: later})
				all = append(all, id)
			}
		}

		d := run(1)
		add("one", 30)
		if err := d.Stop(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		d = run(4)
		if _, err := producer.Partitions(ctx, q); err != nil { // the producer reads 4
			t.Fatal(err)
		}
		add("four", 60)
		for _, id := range []string{"one-000", "four-000"} {
			if job := getJob(t, producer, q, id); job.State != worker.StateScheduled {
				t.Errorf("Get(%s) = %s; want scheduled", id, job.State)
			}
		}
		if err := d.Stop(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		run(2)
		// The producer still thinks 4: partitions of the 4-layout that the
		// 2-layout lacks refuse its jobs, and it sends them again by the
		// new layout.
		add("two", 60)
		if n, err := producer.Partitions(ctx, q); err != nil || n != 2 {
			t.Fatalf("Partitions = %d, %v; want 2", n, err)
		}
		if s := stats(t, producer, q); s.Scheduled+s.Ready+s.Active != int64(len(all)) {
			t.Errorf("Stats = %+v; want %d jobs in all", s, len(all))
		}
		testkit.Eventually(t, 30*time.Second, "every job to run", func() bool {
			return rec.Count() >= len(all) && stats(t, producer, q) == admin.QueueStats{}
		})
		for _, id := range all {
			if n := len(rec.Of(id)); n != 1 {
				t.Errorf("job %s ran %d times; want once", id, n)
			}
		}
	})
}

// TestPartitionLeadersSpread: two daemons share the leaderships of a
// queue's four partitions, two each, even when one started first.
func TestPartitionLeadersSpread(t *testing.T) {
	t.Parallel()
	rdb, prefix := testkit.Single(t), testkit.Prefix(t)
	const q, parts = "spread", 4
	cfg := testConfig(t, prefix)
	reg := func() *worker.Registry {
		return register(t, nil, q, worker.HandlerFunc(succeed), worker.QueueOptions{Partitions: parts})
	}
	first := startDaemon(t, rdb, reg(), cfg)
	testkit.Eventually(t, 10*time.Second, "the first daemon to lead partition 0", func() bool { return first.Leading(q) })
	second := startDaemon(t, rdb, reg(), cfg)
	c := newClient(t, rdb, cfg)
	leaders := func() map[string]int {
		ids, err := c.PartitionLeaders(t.Context(), q)
		if err != nil || len(ids) != parts {
			return nil
		}
		out := map[string]int{}
		for _, id := range ids {
			out[id]++
		}
		return out
	}
	testkit.Eventually(t, 40*time.Second, "two partitions led by each daemon", func() bool {
		l := leaders()
		return l[first.ID()] == 2 && l[second.ID()] == 2
	})
}

// TestPartitionedRateLimit: the queue's rate limit holds for the
// partitions together.
func TestPartitionedRateLimit(t *testing.T) {
	t.Parallel()
	rdb, prefix := testkit.Single(t), testkit.Prefix(t)
	const q, parts = "rated", 4
	cfg := testConfig(t, prefix)
	c := newClient(t, rdb, cfg)
	rec := newRecorder()
	reg := register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{
		Concurrency: 8, Partitions: parts, RateLimit: worker.RateLimit{N: 20, Per: time.Second},
	})
	startDaemon(t, rdb, reg, cfg)
	waitPartitions(t, c, q, parts)
	enqueueAll(t, c, specs(q, "r", 200))
	start := time.Now()
	testkit.Eventually(t, 10*time.Second, "some jobs to run", func() bool { return rec.Count() >= 20 })
	// Wait 1.5 s after the first claim: at most 20 per any 1 s window, so
	// at most 40 by then (two windows).
	time.Sleep(time.Until(start.Add(1500 * time.Millisecond))) //nolint:forbidigo // a window of the real clock
	if n := rec.Count(); n > 40 {
		t.Errorf("%d jobs started within 1.5 s under a limit of 20/s", n)
	}
}
