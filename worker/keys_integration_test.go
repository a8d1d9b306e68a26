package worker_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// keyWatch is a handler that counts, per job key, the jobs running at once
// (across every daemon of the test), and remembers the highest count and
// when each job started.
type keyWatch struct {
	mu      sync.Mutex
	running map[string]int
	peak    map[string]int
	started map[string]time.Time // job id → start
	done    int
	hold    time.Duration
}

func newKeyWatch(hold time.Duration) *keyWatch {
	return &keyWatch{running: map[string]int{}, peak: map[string]int{}, started: map[string]time.Time{}, hold: hold}
}

func (w *keyWatch) handle(ctx context.Context, job *worker.Job) error {
	w.mu.Lock()
	w.running[job.Key]++
	w.peak[job.Key] = max(w.peak[job.Key], w.running[job.Key])
	w.started[job.ID] = time.Now()
	w.mu.Unlock()
	t := time.NewTimer(w.hold)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	w.mu.Lock()
	w.running[job.Key]--
	w.done++
	w.mu.Unlock()
	return nil
}

func (w *keyWatch) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.done
}

func (w *keyWatch) peakOf(key string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peak[key]
}

func (w *keyWatch) startOf(id string) time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.started[id]
}

// slotsLeft sums, over queue's partitions, the slots its keys hold
// (rediskeys.Queue.KeyState's "r:" fields): 0 once no keyed job runs.
func slotsLeft(t *testing.T, rdb rueidis.Client, prefix, queue string, parts int) int {
	t.Helper()
	n := 0
	for i := range parts {
		st := testkit.HGetAll(t, rdb, rediskeys.PartitionKeys(prefix, queue, parts, i).KeyState)
		for f, v := range st {
			if len(f) > 2 && f[:2] == "r:" {
				c, _ := strconv.Atoi(v)
				n += c
			}
		}
	}
	return n
}

// TestKeyConcurrencyAcrossDaemons runs a partitioned queue with a key cap
// of 2 on two daemons of 8 slots each: no key ever runs more than 2 jobs
// at once, every job runs, and no slot is held once they are done.
func TestKeyConcurrencyAcrossDaemons(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q, parts, perKey = "capped", 3, 12
		keys := []string{"acme", "globex", "initech", "umbrella"}
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		w := newKeyWatch(15 * time.Millisecond)
		opts := worker.QueueOptions{Concurrency: 8, Partitions: parts, KeyConcurrency: 2}
		startDaemon(t, rdb, register(t, nil, q, worker.HandlerFunc(w.handle), opts), cfg)
		startDaemon(t, rdb, register(t, nil, q, worker.HandlerFunc(w.handle), opts), cfg)
		waitPartitions(t, c, q, parts)
		var all []worker.JobSpec
		for _, k := range keys {
			for i := range perKey {
				all = append(all, worker.JobSpec{Queue: q, Key: k, ID: fmt.Sprintf("%s-%02d", k, i)})
			}
		}
		enqueueAll(t, c, all)
		testkit.Eventually(t, 30*time.Second, "every job to run", func() bool { return w.count() >= len(all) })
		for _, k := range keys {
			// Job.Key reached the handler, and the cap was used, not passed.
			if p := w.peakOf(k); p != 2 {
				t.Errorf("key %s ran at most %d jobs at once; its cap is 2", k, p)
			}
		}
		testkit.Eventually(t, 5*time.Second, "no slot held", func() bool { return slotsLeft(t, rdb, prefix, q, parts) == 0 })
	})
}

// TestKeyFairShare puts one key's backlog of 300 jobs ahead of another
// key's single job on one daemon of 4 slots: the single job starts within
// a few jobs' time, not behind the backlog.
func TestKeyFairShare(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q = "fair"
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		w := newKeyWatch(10 * time.Millisecond)
		if err := c.Pause(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		startDaemon(t, rdb, register(t, nil, q, worker.HandlerFunc(w.handle), worker.QueueOptions{Concurrency: 4}), cfg)
		var big []worker.JobSpec
		for i := range 300 {
			big = append(big, worker.JobSpec{Queue: q, Key: "big", ID: fmt.Sprintf("big-%03d", i)})
		}
		enqueueAll(t, c, big)
		if err := c.Resume(t.Context(), q); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, 10*time.Second, "the backlog to start", func() bool { return w.count() >= 8 })
		enqueued := time.Now()
		enqueueAll(t, c, []worker.JobSpec{{Queue: q, Key: "small", ID: "small-1"}})
		testkit.Eventually(t, 10*time.Second, "the small key's job to start", func() bool { return !w.startOf("small-1").IsZero() })
		waited := w.startOf("small-1").Sub(enqueued)
		behind := 0
		w.mu.Lock()
		for id, at := range w.started {
			if id != "small-1" && at.After(enqueued) && at.Before(w.started["small-1"]) {
				behind++
			}
		}
		w.mu.Unlock()
		// Four slots: the small job takes the next free one, after at most
		// the jobs the claims in flight took (a claim fills every free slot).
		if behind > 8 {
			t.Errorf("the small key's job started after %d jobs of the backlog (%s); want it within a claim or two", behind, waited)
		}
		t.Logf("the small key's job started %s after its enqueue, %d backlog jobs before it", waited, behind)
	})
}

// TestSetKeyLimits raises one key's cap at run time: a key held at the
// queue's cap of 1 runs up to 3 at once after SetKeyLimits, and reads back
// its limits; a bad limit is refused, naming the field.
func TestSetKeyLimits(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q = "limits"
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		w := newKeyWatch(40 * time.Millisecond)
		startDaemon(t, rdb, register(t, nil, q, worker.HandlerFunc(w.handle), worker.QueueOptions{Concurrency: 8, Partitions: 2, KeyConcurrency: 1}), cfg)
		waitPartitions(t, c, q, 2)
		var jobs []worker.JobSpec
		for i := range 20 {
			jobs = append(jobs, worker.JobSpec{Queue: q, Key: "acme", ID: fmt.Sprintf("a-%02d", i)})
		}
		enqueueAll(t, c, jobs)
		testkit.Eventually(t, 10*time.Second, "a job to start", func() bool { return w.count() >= 2 })
		if p := w.peakOf("acme"); p != 1 {
			t.Fatalf("peak %d before the change; the queue's cap is 1", p)
		}
		if err := c.Op.SetKeyLimits(t.Context(), q, "acme", admin.KeyLimits{Concurrency: 3, Weight: 2}); err != nil {
			t.Fatal(err)
		}
		st, err := c.Op.Key(t.Context(), q, "acme")
		if err != nil || st.Limits != (admin.KeyLimits{Concurrency: 3, Weight: 2}) {
			t.Fatalf("Key = %+v, %v; want limits 3, 2", st, err)
		}
		testkit.Eventually(t, 30*time.Second, "every job to run", func() bool { return w.count() >= len(jobs) })
		if p := w.peakOf("acme"); p != 3 {
			t.Errorf("peak %d after raising the cap to 3", p)
		}
		checkInvalid(t, c.Op.SetKeyLimits(t.Context(), q, "acme", admin.KeyLimits{Concurrency: -2}), "Concurrency", "")
		checkInvalid(t, c.Op.SetKeyLimits(t.Context(), q, "acme", admin.KeyLimits{Weight: 1001}), "Weight", "")
		checkInvalid(t, c.Op.SetKeyLimits(t.Context(), q, "bad key", admin.DefaultKeyLimits), "Key", "")
		checkInvalid(t, second(c.Enqueue(t.Context(), worker.JobSpec{Queue: q, Key: "has space"})), "Key", "")
	})
}

// TestKeyLimitedHoldsBackOneKey has a handler answer "slow down" for one
// key (worker.KeyLimited, as the webhook does on 429 with Retry-After):
// no job of that key starts again before the time said, none spends an
// attempt, and the other key's jobs go on meanwhile.
func TestKeyLimitedHoldsBackOneKey(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		const q, hold = "backpressure", 400 * time.Millisecond
		cfg := testConfig(t, prefix)
		c := newClient(t, rdb, cfg)
		var mu sync.Mutex
		var limitedAt time.Time
		starts := map[string][]time.Time{}
		attempts := map[string]int{}
		h := worker.HandlerFunc(func(_ context.Context, job *worker.Job) error {
			mu.Lock()
			defer mu.Unlock()
			starts[job.Key] = append(starts[job.Key], time.Now())
			attempts[job.ID] = max(attempts[job.ID], job.Attempt)
			if job.Key == "slow" && limitedAt.IsZero() {
				limitedAt = time.Now()
				return worker.KeyLimited(hold)
			}
			return nil
		})
		startDaemon(t, rdb, register(t, nil, q, h, worker.QueueOptions{Concurrency: 1, Partitions: 2}), cfg)
		waitPartitions(t, c, q, 2)
		var jobs []worker.JobSpec
		for i := range 3 {
			jobs = append(jobs, worker.JobSpec{Queue: q, Key: "slow", ID: fmt.Sprintf("s%d", i)})
		}
		for i := range 20 {
			jobs = append(jobs, worker.JobSpec{Queue: q, Key: "fast", ID: fmt.Sprintf("f%02d", i)})
		}
		enqueueAll(t, c, jobs)
		testkit.Eventually(t, 20*time.Second, "every job to run", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(starts["slow"]) >= 4 && len(starts["fast"]) >= 20
		})
		mu.Lock()
		defer mu.Unlock()
		fastDuring := 0
		for _, at := range starts["fast"] {
			if at.After(limitedAt) && at.Before(limitedAt.Add(hold)) {
				fastDuring++
			}
		}
		for _, at := range starts["slow"] {
			if at.After(limitedAt) && at.Before(limitedAt.Add(hold-clockSlack)) {
				t.Errorf("a job of the limited key started %s after the limit, before its %s ended", at.Sub(limitedAt), hold)
			}
		}
		if fastDuring == 0 {
			t.Errorf("no job of the other key ran while slow was limited")
		}
		for id, a := range attempts {
			if a != 1 {
				t.Errorf("job %s ran attempt %d; a key limit spends none", id, a)
			}
		}
	})
}
