package worker_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// waitPartitions waits until the daemons stored queue's partitions.
func waitPartitions(t *testing.T, c *client, queue string, n int) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, fmt.Sprintf("queue %s to have %d partitions", queue, n), func() bool {
		got, err := c.Partitions(t.Context(), queue)
		return err == nil && got == n
	})
}

// partitionSizes counts the jobs of each partition of queue (ZCARD of its
// normal due set).
func partitionSizes(t *testing.T, rdb rueidis.Client, prefix, queue string, n int) []int64 {
	t.Helper()
	out := make([]int64, n)
	for i := range n {
		due := rediskeys.PartitionKeys(prefix, queue, n, i).Due
		v, err := rdb.Do(t.Context(), rdb.B().Zcard().Key(due).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = v
	}
	return out
}

func TestPartitionedQueue(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q, parts = "pq", 4
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		ctx := t.Context()
		rec := newRecorder()
		reg := register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{Concurrency: 8, Partitions: parts})
		// Paused first: the jobs stay put while the test looks at them.
		if err := c.Pause(ctx, q); err != nil {
			t.Fatal(err)
		}
		startDaemon(t, rdb, reg, cfg)
		waitPartitions(t, c, q, parts)
		if err := c.Pause(ctx, q); err != nil { // every partition, now that there are four
			t.Fatal(err)
		}
		jobs := specs(q, "j", 400)
		enqueueAll(t, c, jobs)
		unique := enqueue(t, c, worker.JobSpec{Queue: q, UniqueKey: "the-one"})
		if _, err := c.Enqueue(ctx, worker.JobSpec{Queue: q, UniqueKey: "the-one"}); err == nil {
			t.Error("a second job with the same unique key was added")
		}
		if rediskeys.PartitionOf(unique, parts) != rediskeys.PartitionOf("the-one", parts) {
			t.Errorf("the generated id %s is not in its unique key's partition", unique)
		}

		sizes := partitionSizes(t, rdb, prefix, q, parts)
		for i, n := range sizes {
			if n < 60 || n > 150 {
				t.Errorf("partition %d holds %d of 401 jobs (sizes %v): not spread", i, n, sizes)
			}
		}
		if s := stats(t, c, q); s.Ready != 401 || !s.Paused {
			t.Errorf("Stats = %+v; want 401 ready, paused", s)
		}
		for _, id := range []string{"j-0000", "j-0123", unique} {
			if job := getJob(t, c, q, id); job.State != worker.StateReady || job.Queue != q {
				t.Errorf("Get(%s) = %+v; want ready in queue %s", id, job, q)
			}
		}
		// The pages of the ready jobs list every job once, partition after
		// partition.
		seen := map[string]int{}
		cursor := ""
		for pages := 0; ; pages++ {
			page, err := c.Jobs(ctx, admin.JobListParams{Queue: q, State: worker.StateReady, Limit: 70, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			for _, j := range page.Jobs {
				seen[j.ID]++
			}
			if cursor = page.Next; cursor == "" || pages > 20 {
				break
			}
		}
		if len(seen) != 401 {
			t.Errorf("List saw %d distinct jobs; want 401", len(seen))
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("List listed %s %d times", id, n)
			}
		}
		if err := c.Cancel(ctx, q, "j-0007"); err != nil {
			t.Fatal(err)
		}
		if !inState(t, c, q, "j-0007", worker.StateCancelled) {
			t.Error("the cancelled job is not kept as cancelled")
		}
		// Nothing ran while paused; the resume starts every partition.
		if n := rec.Count(); n != 0 {
			t.Fatalf("%d jobs ran while the queue was paused", n)
		}
		if err := c.Resume(ctx, q); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 20*time.Second, "every job to run", func() bool {
			return rec.Count() >= 400 && stats(t, c, q) == admin.QueueStats{Cancelled: 1}
		})
		if n := rec.Count(); n != 400 {
			t.Errorf("%d attempts for 400 jobs", n)
		}
	})
}

func TestPartitionedDeadTriage(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q, parts = "pd", 3
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		ctx := t.Context()
		var mu sync.Mutex
		fail := true
		h := func(context.Context, *worker.Job) error {
			mu.Lock()
			defer mu.Unlock()
			if fail {
				return worker.Permanent(fmt.Errorf("boom"))
			}
			return nil
		}
		startDaemon(t, rdb, register(t, nil, q, worker.HandlerFunc(h), worker.QueueOptions{Partitions: parts}), cfg)
		waitPartitions(t, c, q, parts)
		enqueueAll(t, c, specs(q, "d", 60))
		testkit.Eventually(t, 20*time.Second, "60 dead jobs", func() bool { return stats(t, c, q).Dead == 60 })
		res, err := c.Triage(ctx, admin.TriageParams{Queue: q, Action: admin.TriageRequeue, IDs: []string{"d-0001", "d-0002", "nope"}, DryRun: true})
		if err != nil || res.Matched != 2 {
			t.Fatalf("dry run by ids = %+v, %v; want 2 matched", res, err)
		}
		n, err := c.Purge(ctx, q, "d-0001", "d-0002", "d-0003")
		if err != nil || n != 3 {
			t.Fatalf("Purge = %d, %v; want 3", n, err)
		}
		// A filter walk in pages of 10 covers every partition.
		mu.Lock()
		fail = false
		mu.Unlock()
		total, cursor := 0, ""
		for range 20 {
			res, err := c.Triage(ctx, admin.TriageParams{Queue: q, Action: admin.TriageRequeue, Filter: admin.DeadFilter{ErrorContains: "boom"}, Max: 10, Cursor: cursor})
			if err != nil {
				t.Fatal(err)
			}
			total += res.Changed
			if cursor = res.Next; cursor == "" {
				break
			}
		}
		if total != 57 {
			t.Errorf("the walk requeued %d jobs; want 57", total)
		}
		testkit.Eventually(t, 20*time.Second, "the requeued jobs to run", func() bool { return stats(t, c, q) == admin.QueueStats{} })
	})
}

// TestPartitionsTakeTurns checks that a backlog in one partition does not
// keep another partition's jobs waiting: the partitions share the slots.
func TestPartitionsTakeTurns(t *testing.T) {
	t.Parallel()
	rdb, prefix := testkit.Single(t), testkit.Prefix(t)
	const q, parts = "turns", 2
	cfg := testConfig(t, prefix)
	c := newClient(t, rdb, cfg)
	var mu sync.Mutex
	var order []string
	h := func(context.Context, *worker.Job) error {
		time.Sleep(2 * time.Millisecond) //nolint:forbidigo // a handler that takes time
		return nil
	}
	rec := newRecorder()
	reg := register(t, nil, q, rec.Handler(func(ctx context.Context, j *worker.Job) error {
		mu.Lock()
		order = append(order, j.ID)
		mu.Unlock()
		return h(ctx, j)
	}), worker.QueueOptions{Concurrency: 2, Partitions: parts})
	if err := c.Pause(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	startDaemon(t, rdb, reg, cfg)
	waitPartitions(t, c, q, parts)
	if err := c.Pause(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	// 300 jobs in partition 0, then 20 in partition 1.
	var backlog, few []worker.JobSpec
	for i := 0; len(backlog) < 300 || len(few) < 20; i++ {
		id := fmt.Sprintf("t-%05d", i)
		switch p := rediskeys.PartitionOf(id, parts); {
		case p == 0 && len(backlog) < 300:
			backlog = append(backlog, worker.JobSpec{Queue: q, ID: id})
		case p == 1 && len(few) < 20:
			few = append(few, worker.JobSpec{Queue: q, ID: id})
		}
	}
	enqueueAll(t, c, backlog)
	enqueueAll(t, c, few)
	if err := c.Resume(t.Context(), q); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 30*time.Second, "every job to run", func() bool { return rec.Count() >= 320 })
	mu.Lock()
	defer mu.Unlock()
	last := 0
	for i, id := range order {
		if slices.ContainsFunc(few, func(s worker.JobSpec) bool { return s.ID == id }) {
			last = i
		}
	}
	// Taking turns, the 20 jobs of partition 1 are done within about the
	// first 40 starts; strictly one partition after the other, after 300.
	if last > 100 {
		t.Errorf("the last job of the short partition started %dth of 320: it waited for the other's backlog", last+1)
	}
}

// TestPartitionedPeriodic: partition 0's leader fires a partitioned
// queue's periodic jobs, once per tick, and Get finds them.
func TestPartitionedPeriodic(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q = "ptick"
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		var mu sync.Mutex
		var ids []string
		h := rec.Handler(func(_ context.Context, j *worker.Job) error {
			mu.Lock()
			ids = append(ids, j.ID)
			mu.Unlock()
			return nil
		})
		opts := worker.QueueOptions{Partitions: 3, Periodic: []worker.Periodic{{Name: "tick", Every: time.Second}}}
		startDaemon(t, rdb, register(t, nil, q, h, opts), cfg)
		startDaemon(t, rdb, register(t, nil, q, h, opts), cfg)
		testkit.Eventually(t, 15*time.Second, "three ticks", func() bool { return rec.Count() >= 3 })
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Errorf("periodic job %s ran twice", id)
			}
			seen[id] = true
		}
		if st, err := c.Periodic(t.Context(), q); err != nil || len(st) != 1 || st[0].LastFire.IsZero() {
			t.Errorf("Periodic = %+v, %v; want tick's last fire", st, err)
		}
	})
}
