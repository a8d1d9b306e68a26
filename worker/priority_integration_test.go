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
	"github.com/seed-53d105c9/courier/worker/admin"
)

// levels are the priority levels, highest first.
var levels = []worker.Priority{worker.PriorityHigh, worker.PriorityNormal, worker.PriorityLow}

// leveledJob is what a priority test expects of one job, and what its
// handler saw.
type leveledJob struct {
	ID       string
	Priority worker.Priority
	RunAt    time.Time
	Attempt  int
}

// runOrder records the jobs a handler ran, in the order they started.
type runOrder struct {
	mu  sync.Mutex
	ran map[string][]leveledJob // queue → jobs in start order
}

func newRunOrder() *runOrder { return &runOrder{ran: make(map[string][]leveledJob)} }

func (o *runOrder) handler(fail func(job *worker.Job) error) worker.HandlerFunc {
	return func(_ context.Context, job *worker.Job) error {
		o.mu.Lock()
		o.ran[job.Queue] = append(o.ran[job.Queue], leveledJob{ID: job.ID, Priority: job.Priority, RunAt: job.RunAt, Attempt: job.Attempt})
		o.mu.Unlock()
		if fail != nil {
			return fail(job)
		}
		return nil
	}
}

func (o *runOrder) of(queue string) []leveledJob {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.ran[queue])
}

func (o *runOrder) total() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, r := range o.ran {
		n += len(r)
	}
	return n
}

// backlog enqueues perLevel jobs of each level to queue, all due an hour
// ago, with generated ids. Run-ats are distinct and a millisecond apart,
// and neither the enqueue order nor the levels follow them. It returns
// the jobs by id.
func backlog(t *testing.T, c *client, queue string, perLevel int) map[string]leveledJob {
	t.Helper()
	n := perLevel * len(levels)
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	if n%7 == 0 {
		t.Fatalf("backlog of %d jobs: i*7 mod n is a permutation only when 7 does not divide n", n)
	}
	specs := make([]worker.JobSpec, n)
	for i := range specs {
		rank := (i * 7) % n // a permutation of 0..n-1
		specs[i] = worker.JobSpec{Queue: queue, Priority: levels[i%len(levels)], RunAt: base.Add(time.Duration(rank) * time.Millisecond)}
	}
	res, err := c.EnqueueMany(t.Context(), specs)
	if err != nil {
		t.Fatalf("EnqueueMany: %v", err)
	}
	jobs := make(map[string]leveledJob, n)
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("EnqueueMany job %d: %v", i, r.Err)
		}
		jobs[r.ID] = leveledJob{ID: r.ID, Priority: specs[i].Priority, RunAt: specs[i].RunAt}
	}
	if len(jobs) != n {
		t.Fatalf("EnqueueMany returned %d distinct ids for %d jobs", len(jobs), n)
	}
	return jobs
}

// strictOrder returns jobs as strict priority runs them: by level, highest
// first, each level by run-at.
func strictOrder(jobs map[string]leveledJob) []leveledJob {
	out := slices.Collect(func(yield func(leveledJob) bool) {
		for _, j := range jobs {
			if !yield(j) {
				return
			}
		}
	})
	slices.SortFunc(out, func(a, b leveledJob) int {
		if a.Priority != b.Priority {
			return int(b.Priority) - int(a.Priority)
		}
		return a.RunAt.Compare(b.RunAt)
	})
	return out
}

// levelString is the levels of jobs, one letter each: "hhnl…".
func levelString(jobs []leveledJob) string {
	var b strings.Builder
	for _, j := range jobs {
		b.WriteByte(j.Priority.String()[0])
	}
	return b.String()
}

// checkRanAsEnqueued fails unless every job of want ran exactly once,
// seeing its own priority and run-at, and each level ran by run-at.
func checkRanAsEnqueued(t *testing.T, ran []leveledJob, want map[string]leveledJob) {
	t.Helper()
	if len(ran) != len(want) {
		t.Errorf("%d runs for %d jobs", len(ran), len(want))
	}
	seen := make(map[string]bool, len(ran))
	last := make(map[worker.Priority]time.Time)
	for _, r := range ran {
		w, ok := want[r.ID]
		switch {
		case !ok:
			t.Errorf("job %s ran but was not enqueued here", r.ID)
			continue
		case seen[r.ID]:
			t.Errorf("job %s ran twice", r.ID)
		}
		seen[r.ID] = true
		if r.Priority != w.Priority || !r.RunAt.Equal(w.RunAt) {
			t.Errorf("handler of job %s saw priority %v run-at %s; want %v %s", r.ID, r.Priority, r.RunAt, w.Priority, w.RunAt)
		}
		if r.RunAt.Before(last[r.Priority]) {
			t.Errorf("job %s (%v, run-at %s) ran after a %v job due later (%s)", r.ID, r.Priority, r.RunAt.Format(time.StampMilli), r.Priority, last[r.Priority].Format(time.StampMilli))
		}
		last[r.Priority] = r.RunAt
	}
}

// TestPriorityOrder: with one job at a time, due jobs run all high first,
// then normal, then low, each level by run-at, whatever the enqueue order;
// the handler sees each job's priority, and Get reports it.
func TestPriorityOrder(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const queue = "q"
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		jobs := backlog(t, c, queue, 5)
		for id, j := range jobs {
			if got := getJob(t, c, queue, id); got.Priority != j.Priority || got.State != worker.StateReady {
				t.Errorf("Get(%s) = priority %v state %s; want %v ready", id, got.Priority, got.State, j.Priority)
			}
		}
		if s := stats(t, c, queue); s.Ready != int64(len(jobs)) {
			t.Errorf("Stats = %+v; want %d ready (every level counted)", s, len(jobs))
		}

		order := newRunOrder()
		startDaemon(t, rdb, register(t, nil, queue, order.handler(nil), worker.QueueOptions{Concurrency: 1}), cfg)
		testkit.Eventually(t, 20*time.Second, "every job to run", func() bool { return order.total() >= len(jobs) })

		ran := order.of(queue)
		checkRanAsEnqueued(t, ran, jobs)
		want := strictOrder(jobs)
		if got, w := levelString(ran), levelString(want); got != w {
			t.Errorf("levels in run order %s; want %s", got, w)
		}
		for i := range min(len(ran), len(want)) {
			if ran[i].ID != want[i].ID {
				t.Errorf("run %d was job %s (%v, run-at %s); want %s (%v, run-at %s)", i,
					ran[i].ID, ran[i].Priority, ran[i].RunAt.Format(time.StampMilli), want[i].ID, want[i].Priority, want[i].RunAt.Format(time.StampMilli))
			}
		}
		testkit.Eventually(t, 10*time.Second, "every job to be acked", func() bool { return stats(t, c, queue) == admin.QueueStats{} })
	})
}

// TestPriorityDelayedHighWaits: a high job is not started before its
// run-at, while lower jobs due now run; it starts at its run-at, woken by
// the head timer (the safety poll is an hour).
func TestPriorityDelayedHighWaits(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const queue, delay = "q", 1500 * time.Millisecond
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		high := enqueue(t, c, worker.JobSpec{Queue: queue, Priority: worker.PriorityHigh, Delay: delay})
		runAt := getJob(t, c, queue, high).RunAt
		lower := []string{
			enqueue(t, c, worker.JobSpec{Queue: queue, Priority: worker.PriorityLow}),
			enqueue(t, c, worker.JobSpec{Queue: queue}),
			enqueue(t, c, worker.JobSpec{Queue: queue, Priority: worker.PriorityLow}),
		}

		var mu sync.Mutex
		started := make(map[string]time.Time)
		h := worker.HandlerFunc(func(_ context.Context, job *worker.Job) error {
			mu.Lock()
			started[job.ID] = time.Now()
			mu.Unlock()
			return nil
		})
		startDaemon(t, rdb, register(t, nil, queue, h, worker.QueueOptions{Concurrency: 1}), cfg)
		testkit.Eventually(t, delay+10*time.Second, "every job to run", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(started) == len(lower)+1
		})

		mu.Lock()
		defer mu.Unlock()
		at := started[high]
		if at.Before(runAt.Add(-clockSlack)) {
			t.Errorf("the high job started at %s, before its run-at %s", at.Format(time.StampMilli), runAt.Format(time.StampMilli))
		}
		if late := at.Sub(runAt); late > 2*time.Second {
			t.Errorf("the high job started %v after its run-at; want at once (the head timer)", late)
		}
		for _, id := range lower {
			if !started[id].Before(at) {
				t.Errorf("job %s due now started at %s, after the delayed high job (%s)", id, started[id].Format(time.StampMilli), at.Format(time.StampMilli))
			}
		}
	})
}

// TestPriorityWeights: three queues, each served one job at a time, each
// with a backlog of every level. Strict priority (zero weights) runs every
// high job first. Even weights start low jobs while the high backlog is
// still long. A weight of 0 runs its level only when the weighted levels
// have nothing due. Each level always runs by run-at.
func TestPriorityWeights(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const perLevel = 30
		n := perLevel * len(levels)
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		queues := map[string]worker.PriorityWeights{
			"strict":    {},
			"even":      {High: 1, Normal: 1, Low: 1},
			"no-normal": {High: 1, Normal: 0, Low: 1},
		}
		jobs := make(map[string]map[string]leveledJob)
		order := newRunOrder()
		var reg *worker.Registry
		for q, w := range queues {
			jobs[q] = backlog(t, c, q, perLevel)
			reg = register(t, reg, q, order.handler(nil), worker.QueueOptions{Concurrency: 1, PriorityWeights: w})
		}
		startDaemon(t, rdb, reg, cfg)
		testkit.Eventually(t, 30*time.Second, "every job to run", func() bool { return order.total() >= n*len(queues) })

		for q := range queues {
			ran := order.of(q)
			checkRanAsEnqueued(t, ran, jobs[q])
			t.Logf("%s: %s", q, levelString(ran))
		}
		strict := levelString(order.of("strict"))
		if want := strings.Repeat("h", perLevel) + strings.Repeat("n", perLevel) + strings.Repeat("l", perLevel); strict != want {
			t.Errorf("strict priority ran levels %s; want %s", strict, want)
		}
		// Each job of a claim of one goes to a level at random in effect
		// (the Redis clock's µs): the chance that none of the first half
		// is low is (2/3)^45, about 1e-8.
		even := levelString(order.of("even"))
		if firstHalf := even[:min(len(even), n/2)]; !strings.Contains(firstHalf, "l") {
			t.Errorf("even weights ran no low job among the first %d: %s", n/2, even)
		}
		if i, j := strings.Index(even, "l"), strings.LastIndex(even, "h"); i < 0 || j < 0 || i > j {
			t.Errorf("even weights ran the first low job (%d) after the last high one (%d): %s", i, j, even)
		}
		noNormal := levelString(order.of("no-normal"))
		if tail := noNormal[max(len(noNormal)-perLevel, 0):]; tail != strings.Repeat("n", perLevel) {
			t.Errorf("weights {1, 0, 1} ran normal jobs before high and low were done: %s", noNormal)
		}
		// (1/2)^30: high and low share the first runs.
		if head := noNormal[:min(len(noNormal), perLevel)]; !strings.Contains(head, "l") || !strings.Contains(head, "h") {
			t.Errorf("weights {1, 0, 1} did not share the first %d runs between high and low: %s", perLevel, noNormal)
		}
	})
}

// TestPriorityKeptAcrossRetries: a job that fails goes back to the due set
// of its level: its next attempt is still high and runs before the normal
// and low jobs waiting, and a dead job requeued keeps its level too.
func TestPriorityKeptAcrossRetries(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const queue = "q"
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		flaky := enqueue(t, c, worker.JobSpec{Queue: queue, Priority: worker.PriorityHigh, ID: "flaky"})
		doomed := enqueue(t, c, worker.JobSpec{Queue: queue, Priority: worker.PriorityLow, ID: "doomed", MaxAttempts: 1})
		others := backlog(t, c, queue, 3)

		order := newRunOrder()
		h := order.handler(func(job *worker.Job) error {
			switch {
			case job.ID == flaky && job.Attempt == 1:
				return errors.New("try again")
			case job.ID == doomed && job.LastError == "":
				return worker.Permanent(errors.New("nope"))
			}
			return nil
		})
		opts := worker.QueueOptions{Concurrency: 1, Backoff: worker.FixedSteps{0}}
		d := startDaemon(t, rdb, register(t, nil, queue, h, opts), cfg)
		total := 2 + 1 + len(others) // flaky twice, doomed once, the rest once
		testkit.Eventually(t, 20*time.Second, "every job to run", func() bool { return order.total() >= total })
		testkit.Eventually(t, 10*time.Second, "the doomed job to die", func() bool { return inState(t, c, queue, doomed, worker.StateDead) })

		// The backlog's three high jobs are due an hour ago and run first,
		// then the flaky one; its retry is due at once (backoff 0), written
		// before its slot is freed, and is the only high job left: it runs
		// next, before every normal and low job.
		ran := order.of(queue)
		var got []string
		first, second := -1, -1
		for i, r := range ran {
			got = append(got, fmt.Sprintf("%s/%v/%d", r.ID, r.Priority, r.Attempt))
			if r.ID == flaky && r.Attempt == 1 {
				first = i
			}
			if r.ID == flaky && r.Attempt == 2 {
				second = i
				if r.Priority != worker.PriorityHigh {
					t.Errorf("the retried job's handler saw priority %v; want high", r.Priority)
				}
			}
		}
		if first != 3 || second != first+1 {
			t.Errorf("the flaky job's attempts ran at %d and %d; want 3 and 4 (run order %v)", first, second, got)
		}
		if err := d.Stop(t, 10*time.Second); err != nil {
			t.Fatal(err)
		}

		// Requeued, the dead low job is due again at its own level.
		if n, err := c.Requeue(t.Context(), queue, doomed); err != nil || n != 1 {
			t.Fatalf("Requeue = %d, %v; want 1", n, err)
		}
		if job := getJob(t, c, queue, doomed); job.Priority != worker.PriorityLow || job.State != worker.StateReady {
			t.Errorf("requeued job: priority %v state %s; want low ready", job.Priority, job.State)
		}
		enqueue(t, c, worker.JobSpec{Queue: queue, ID: "after", Priority: worker.PriorityNormal})
		startDaemon(t, rdb, register(t, nil, queue, h, opts), cfg)
		testkit.Eventually(t, 10*time.Second, "the requeued job to run", func() bool { return order.total() >= total+2 })
		if last := order.of(queue)[total:]; last[0].ID != "after" || last[1].ID != doomed || last[1].Priority != worker.PriorityLow {
			t.Errorf("after the requeue ran %+v; want the normal job, then the requeued low one", last)
		}
	})
}
