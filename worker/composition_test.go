package worker_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// The tests of this file are the reproductions of issue 29's items 1 to 6:
// features that worked alone and broke together with partitions. Each uses
// the public API only, so it runs unchanged against the code before the
// queue layer (worker/internal/queue), where it fails.

// settingsKey is the settings hash of partition i of n of queue.
func settingsKey(prefix, queue string, n, i int) string {
	for _, k := range rediskeys.PartitionKeys(prefix, queue, n, i).All() {
		if strings.HasSuffix(k, ":settings") {
			return k
		}
	}
	panic("no settings key")
}

// idsIn returns n ids, starting with idPrefix, whose partition of parts is
// want (-1: any).
func idsIn(idPrefix string, n, parts, want int) []string {
	var out []string
	for i := 0; len(out) < n; i++ {
		id := fmt.Sprintf("%s-%d", idPrefix, i)
		if want < 0 || rediskeys.PartitionOf(id, parts) == want {
			out = append(out, id)
		}
	}
	return out
}

// waitFinished waits until rec saw n attempts and queue holds no job
// waiting or running.
func waitFinished(t *testing.T, c *client, queue string, rec *recorder, n int) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, "every job to finish", func() bool {
		s := stats(t, c, queue)
		return rec.Count() == n && s.Ready+s.Scheduled+s.Active == 0
	})
}

// never fails the test when cond turns true within d.
func never(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			t.Fatalf("%s", what)
		}
		select {
		case <-t.Context().Done():
			return
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// TestIDRetentionHoldsInEveryPartition (item 1): a queue's id retention
// reaches every partition, so a finished job's id is refused whichever
// partition it lives in.
func TestIDRetentionHoldsInEveryPartition(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q, parts = "retained", 4
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{Partitions: parts, IDRetention: time.Hour}), cfg)
		waitPartitions(t, c, q, parts)
		testkit.Eventually(t, 5*time.Second, "the retention to be stored", func() bool {
			v, _ := testkit.HGet(t, rdb, settingsKey(prefix, q, parts, 0), "id_retention")
			return v == "3600000"
		})
		testkit.Eventually(t, 2*time.Second, "the daemon to report", func() bool {
			f, err := c.Fleet(t.Context(), q)
			return err == nil && len(f.Processes) == 1
		})
		ids := idsIn("order", 20, parts, -1)
		var specs []worker.JobSpec
		for _, id := range ids {
			specs = append(specs, worker.JobSpec{Queue: q, ID: id})
		}
		enqueueAll(t, c, specs)
		waitFinished(t, c, q, rec, len(ids))
		res, err := c.EnqueueMany(t.Context(), specs)
		if err != nil {
			t.Fatal(err)
		}
		again := 0
		for i, r := range res {
			if !errors.Is(r.Err, worker.ErrDuplicate) {
				again++
				t.Errorf("id %s (partition %d) accepted again within its retention: %v", ids[i], rediskeys.PartitionOf(ids[i], parts), r.Err)
			}
		}
		if again > 0 {
			t.Errorf("%d of %d finished ids accepted again", again, len(ids))
		}
	})
}

// TestIDRetentionBackToZeroFreesEveryID (item 2): once the queue retains
// no ids, the ids of finished jobs are free again, those of jobs with a
// priority or a unique key too.
func TestIDRetentionBackToZeroFreesEveryID(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q = "unretained"
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		run := func(retain time.Duration) *daemon {
			return startDaemon(t, rdb, register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{IDRetention: retain}), cfg)
		}
		retained := func() string {
			v, _ := testkit.HGet(t, rdb, settingsKey(prefix, q, 1, 0), "id_retention")
			return v
		}
		d := run(time.Hour)
		testkit.Eventually(t, 5*time.Second, "the retention to be stored", func() bool { return retained() == "3600000" })
		specs := []worker.JobSpec{
			{Queue: q, ID: "plain"},
			{Queue: q, ID: "high", Priority: worker.PriorityHigh},
			{Queue: q, ID: "keyed", UniqueKey: "k1"},
		}
		enqueueAll(t, c, specs)
		waitFinished(t, c, q, rec, len(specs))
		if res, err := c.EnqueueMany(t.Context(), specs); err != nil || !errors.Is(res[1].Err, worker.ErrDuplicate) {
			t.Fatalf("within the retention: %+v, %v; want the ids refused", res, err)
		}
		if err := d.Stop(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		run(0)
		testkit.Eventually(t, 5*time.Second, "the retention to be removed", func() bool { return retained() == "" })
		res, err := c.EnqueueMany(t.Context(), specs)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Errorf("%s refused after the retention went back to 0: %v", specs[i].ID, r.Err)
			}
		}
	})
}

// TestPauseReachesPartitionsALayoutChangeAdds (item 3): a paused queue
// grown from 1 to 4 partitions runs nothing until it is resumed, and
// Stats says paused only while every partition is.
func TestPauseReachesPartitionsALayoutChangeAdds(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q, parts = "pausegrow", 4
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		d := startDaemon(t, rdb, register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{}), cfg)
		testkit.Eventually(t, 5*time.Second, "the daemon to run", d.Running)
		if err := c.Pause(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		if err := d.Stop(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		startDaemon(t, rdb, register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{Partitions: parts}), cfg)
		waitPartitions(t, c, q, parts)
		enqueueAll(t, c, specs(q, "p", 40))
		never(t, time.Second, "a job of the paused queue ran", func() bool { return rec.Count() > 0 })
		if !stats(t, c, q).Paused {
			t.Error("Stats says running while no partition runs")
		}
		if err := c.Resume(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 10*time.Second, "every job to run after the resume", func() bool { return rec.Count() == 40 })
	})
}

// TestOperatorsSeeAPartitionAddedElsewhere (item 4): a Client that read a
// queue's layout before another process changed it gets, cancels, pauses,
// requeues and purges jobs in the partitions the change added.
func TestOperatorsSeeAPartitionAddedElsewhere(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q, parts = "stale", 4
		cfg := testConfig(t, prefix)
		operator := newClient(t, rdb, cfg)
		if _, err := operator.Stats(t.Context(), q); err != nil { // reads the layout of one partition
			t.Fatal(err)
		}
		if _, err := operator.Partitions(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		fail := func(_ *worker.Job) error { return worker.Permanent(errors.New("boom")) }
		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, q, rec.Handler(func(_ context.Context, j *worker.Job) error { return fail(j) }),
			worker.QueueOptions{Partitions: parts}), cfg)
		producer := newClient(t, rdb, cfg)
		waitPartitions(t, producer, q, parts)

		later := idsIn("later", 3, parts, 3)
		for _, id := range later {
			enqueue(t, producer, worker.JobSpec{Queue: q, ID: id, Delay: time.Hour})
		}
		if j, err := operator.Get(t.Context(), q, later[0]); err != nil || j.State != worker.StateScheduled {
			t.Fatalf("Get of a job in an added partition = %+v, %v", j, err)
		}
		if err := operator.Cancel(t.Context(), q, later[1]); err != nil {
			t.Fatalf("Cancel of a job in an added partition: %v", err)
		}
		if !inState(t, producer, q, later[1], worker.StateCancelled) {
			t.Error("the cancelled job is not kept as cancelled")
		}

		dead := idsIn("dead", 2, parts, 2)
		for _, id := range dead {
			enqueue(t, producer, worker.JobSpec{Queue: q, ID: id})
		}
		testkit.Eventually(t, 10*time.Second, "the jobs to die", func() bool {
			return inState(t, producer, q, dead[0], worker.StateDead) && inState(t, producer, q, dead[1], worker.StateDead)
		})
		if n, err := operator.Purge(t.Context(), q, dead[0]); err != nil || n != 1 {
			t.Errorf("Purge of a dead job in an added partition = %d, %v; want 1", n, err)
		}
		if err := operator.Pause(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		if !stats(t, producer, q).Paused {
			t.Error("Pause left an added partition running")
		}
		if n, err := operator.Requeue(t.Context(), q, dead[1]); err != nil || n != 1 {
			t.Errorf("Requeue of a dead job in an added partition = %d, %v; want 1", n, err)
		}
		never(t, 500*time.Millisecond, "the requeued job ran while the queue was paused", func() bool { return len(rec.Of(dead[1])) > 1 })
	})
}

// TestRateLimitHoldsWhileDaemonsDisagreeOnPartitions (item 5): during a
// rolling change of partitions, a daemon still at one and a daemon at four
// share the limit as the stored layout divides it.
func TestRateLimitHoldsWhileDaemonsDisagreeOnPartitions(t *testing.T) {
	t.Parallel()
	rdb, prefix := testkit.Single(t), testkit.Prefix(t)
	const q = "rolling"
	limit := worker.RateLimit{N: 12, Per: time.Second}
	cfg := testConfig(t, prefix)
	c := newClient(t, rdb, cfg)
	var mu sync.Mutex
	var starts []time.Time
	h := worker.HandlerFunc(func(context.Context, *worker.Job) error {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		return nil
	})
	startDaemon(t, rdb, register(t, nil, q, h, worker.QueueOptions{Concurrency: 16, RateLimit: limit}), cfg)
	startDaemon(t, rdb, register(t, nil, q, h, worker.QueueOptions{Concurrency: 16, RateLimit: limit, Partitions: 4}), cfg)
	waitPartitions(t, c, q, 4)
	enqueueAll(t, c, specs(q, "r", 300))
	testkit.Eventually(t, 10*time.Second, "the first jobs to start", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(starts) > 0
	})
	never(t, 3500*time.Millisecond, "", func() bool { return false })
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(starts, func(a, b time.Time) int { return a.Compare(b) })
	// A window a little under the limit's: a handler starts a moment
	// after its claim, by a varying delay.
	const window = 900 * time.Millisecond
	most := 0
	for i := range starts {
		j := i
		for j < len(starts) && starts[j].Sub(starts[i]) < window {
			j++
		}
		most = max(most, j-i)
	}
	if most > limit.N {
		t.Errorf("%d jobs started within %s under a limit of %d per %s (%d started in all)", most, window, limit.N, limit.Per, len(starts))
	}
}

// TestEnqueueDuringALayoutChangeIsNotRefused (item 6): an enqueue that
// reaches a partition retired by a layout change not yet published is
// taken (by partition 0), and its job runs.
func TestEnqueueDuringALayoutChangeIsNotRefused(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q, parts = "midchange", 4
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		rec := newRecorder()
		startDaemon(t, rdb, register(t, nil, q, rec.Handler(succeed), worker.QueueOptions{Partitions: parts}), cfg)
		waitPartitions(t, c, q, parts)
		enqueue(t, c, worker.JobSpec{Queue: q, ID: "first"}) // the producer learns the layout
		// A change to fewer partitions between its first step (partition 2
		// retired) and the layout's publication.
		testkit.Do(t, rdb, rdb.B().Hset().Key(settingsKey(prefix, q, parts, 2)).FieldValue().FieldValue("retired", "1").Build())
		ids := idsIn("mid", 5, parts, 2)
		for _, id := range ids {
			if _, err := c.Enqueue(t.Context(), worker.JobSpec{Queue: q, ID: id}); err != nil {
				t.Fatalf("enqueue during a layout change: %v", err)
			}
		}
		for _, id := range ids {
			rec.WaitCalls(t, id, 1, 10*time.Second)
		}
	})
}
