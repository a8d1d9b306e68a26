package carrier

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// notLeader fails unless every fenced duty called with field is refused
// with ErrNotLeader.
func notLeader(t *testing.T, st *store.Store, field string) {
	t.Helper()
	ctx := t.Context()
	if r, err := st.Recover(ctx, testQueue, field, batchLimit, 3); !errors.Is(err, ErrNotLeader) {
		t.Errorf("Recover with the deposed field = %+v, %v; want ErrNotLeader", r, err)
	}
	if r, err := st.TrimDead(ctx, testQueue, field, 0, time.Millisecond, batchLimit); !errors.Is(err, ErrNotLeader) {
		t.Errorf("TrimDead with the deposed field = %+v, %v; want ErrNotLeader", r, err)
	}
	if r, err := st.Fire(ctx, testQueue, field, store.Fire{Schedule: "deposed", At: time.Now().Add(-time.Second)}); !errors.Is(err, ErrNotLeader) {
		t.Errorf("Fire with the deposed field = %+v, %v; want ErrNotLeader", r, err)
	}
	if _, ok, err := st.LastFire(ctx, testQueue, "deposed"); ok || err != nil {
		t.Errorf("LastFire after a refused fire = %v, %v; want none", ok, err)
	}
}

// leaderHash returns the fields of testQueue's leader lock.
func leaderHash(t *testing.T, n *node) map[string]string {
	t.Helper()
	return testkit.HGetAll(t, n.rdb, n.st.Keys(testQueue).Leader)
}

func TestTakeoverWhenTheLeaderStops(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	queues := []Queue{{Name: testQueue, MaxAttempts: 3}}
	a := startNode(t, prefix, "a", queues, Config{})
	b := startNode(t, prefix, "b", queues, Config{})

	// The lock excludes two leaders at any time here (nothing deletes it
	// behind a holder's back): watch for both leading until the takeover.
	var both atomic.Bool
	watchDone := make(chan struct{})
	var watching sync.WaitGroup
	watching.Go(func() {
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-watchDone:
				return
			case <-tick.C:
				if a.c.Leading(testQueue) && b.c.Leading(testQueue) {
					both.Store(true)
				}
			}
		}
	})
	defer func() {
		close(watchDone)
		watching.Wait()
		if both.Load() {
			t.Error("a and b led at the same time")
		}
	}()

	leader, others := waitLeader(t, a, b)
	follower := others[0]
	if !leader.nextEvent(t, time.Second) {
		t.Fatalf("%s leads, but its first event is not a gain", leader.name)
	}
	// Renewals keep the lead where it is.
	leader.quiet(t, 3*testLease)
	follower.quiet(t, 0)
	if got, want := leaderHash(t, leader), map[string]string{leader.field(): "1"}; !maps.Equal(got, want) {
		t.Errorf("leader hash = %v, want %v", got, want)
	}

	start := time.Now()
	leader.cancel()
	if !follower.nextEvent(t, 5*time.Second) {
		t.Fatalf("%s: first event is a loss", follower.name)
	}
	took := time.Since(start)
	t.Logf("takeover %v after the leader's Run context was cancelled", took)
	if took > time.Second {
		t.Errorf("takeover took %v, want well under 1s (the release wakes the follower)", took)
	}
	leader.stop(t)
	if leader.nextEvent(t, time.Second) {
		t.Errorf("%s: the stop did not end its lead", leader.name)
	}
	if leader.c.Leading(testQueue) || !follower.c.Leading(testQueue) {
		t.Errorf("after the takeover: %s leading %v, %s leading %v", leader.name, leader.c.Leading(testQueue), follower.name, follower.c.Leading(testQueue))
	}
	if got, want := leaderHash(t, follower), map[string]string{follower.field(): "1"}; !maps.Equal(got, want) {
		t.Errorf("leader hash = %v, want %v", got, want)
	}
	// The old leader's field no longer passes the fence; the new one's does.
	notLeader(t, follower.st, leader.field())
	if _, err := follower.st.TrimDead(t.Context(), testQueue, follower.field(), 10000, 30*24*time.Hour, 1); err != nil {
		t.Errorf("TrimDead with the new leader's field: %v", err)
	}
}

func TestLeaderStepsDownWhenItsLockIsDeleted(t *testing.T) {
	t.Parallel()
	interval := testLease / 3 // the watchdog's renewal interval

	// deposed deletes the leader lock behind the leader's back and returns
	// the deposed leader and how long it took to stop leading.
	deposed := func(t *testing.T, nodes ...*node) (*node, time.Duration) {
		t.Helper()
		leader, _ := waitLeader(t, nodes...)
		if !leader.nextEvent(t, time.Second) {
			t.Fatalf("%s leads, but its first event is not a gain", leader.name)
		}
		start := time.Now()
		testkit.Del(t, leader.rdb, leader.st.Keys(testQueue).Leader)
		if leader.nextEvent(t, 5*time.Second) {
			t.Fatalf("%s: gained the lead again without losing it", leader.name)
		}
		took := time.Since(start)
		t.Logf("%s stopped leading %v after its lock was deleted (renewal interval %v)", leader.name, took, interval)
		if took > time.Second {
			t.Errorf("%s stopped leading after %v, want about one renewal interval (%v)", leader.name, took, interval)
		}
		return leader, took
	}

	t.Run("the follower takes over", func(t *testing.T) {
		t.Parallel()
		prefix := testkit.Prefix(t)
		// Hold a deposed leader in its OnLeader call, before it competes
		// again, so that the follower must be the one to take over.
		gate := make(chan struct{})
		var opened sync.Once
		open := func() { opened.Do(func() { close(gate) }) }
		cfg := Config{OnLeader: func(_ string, leading bool) {
			if !leading {
				<-gate
			}
		}}
		queues := []Queue{{Name: testQueue, MaxAttempts: 3}}
		a := startNode(t, prefix, "a", queues, cfg)
		b := startNode(t, prefix, "b", queues, cfg)
		t.Cleanup(open) // runs before the nodes stop

		start := time.Now()
		leader, _ := deposed(t, a, b)
		follower := a
		if leader == a {
			follower = b
		}
		if !follower.nextEvent(t, 5*time.Second) {
			t.Fatalf("%s: first event is a loss", follower.name)
		}
		t.Logf("%s took over %v after the lock was deleted (no unlock message: it waits out the TTL it saw, at most the %v lease)",
			follower.name, time.Since(start), testLease)
		if leader.c.Leading(testQueue) || !follower.c.Leading(testQueue) {
			t.Errorf("%s leading %v, %s leading %v", leader.name, leader.c.Leading(testQueue), follower.name, follower.c.Leading(testQueue))
		}
		notLeader(t, follower.st, leader.field())

		// Let the deposed leader compete again: it waits, the new one leads on.
		open()
		follower.quiet(t, 3*interval)
		leader.quiet(t, 0)
		if !follower.c.Leading(testQueue) {
			t.Errorf("%s no longer leads", follower.name)
		}
	})

	t.Run("someone leads again", func(t *testing.T) {
		t.Parallel()
		prefix := testkit.Prefix(t)
		queues := []Queue{{Name: testQueue, MaxAttempts: 3}}
		a := startNode(t, prefix, "a", queues, Config{})
		b := startNode(t, prefix, "b", queues, Config{})
		leader, _ := deposed(t, a, b)
		start := time.Now()
		next, _ := waitLeader(t, a, b)
		t.Logf("%s (deposed: %s) leads again %v after the deposed leader stepped down", next.name, leader.name, time.Since(start))
		if got, want := leaderHash(t, next), map[string]string{next.field(): "1"}; !maps.Equal(got, want) {
			t.Errorf("leader hash = %v, want %v", got, want)
		}
	})
}

func TestRecoverDuty(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	const recoverEvery = 100 * time.Millisecond
	n := startNode(t, prefix, "a", []Queue{{Name: testQueue, MaxAttempts: 3}}, Config{RecoverInterval: recoverEvery})
	waitLeader(t, n)

	ctx := t.Context()
	if _, err := n.st.Enqueue(ctx, testQueue, []store.NewJob{{ID: "retried"}, {ID: "last-attempt", MaxAttempts: 1}}); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	claimed, err := n.st.Claim(ctx, testQueue, 10, 200*time.Millisecond)
	if err != nil || len(claimed.Jobs) != 2 {
		t.Fatalf("Claim = %+v, %v; want 2 jobs", claimed, err)
	}
	get := func(id string) store.Snapshot {
		t.Helper()
		s, err := n.st.Get(ctx, testQueue, id)
		if err != nil {
			t.Fatalf("Get(%s): %v", id, err)
		}
		return s
	}
	deadline := get("retried").Score // the lease's end, on the Redis clock

	testkit.Eventually(t, 10*time.Second, "recovery", func() bool {
		return get("retried").Set == store.SetDue && get("last-attempt").Set == store.SetDead
	})
	retried := get("retried")
	late := retried.Score.Sub(deadline) // recovered at run-at = now
	t.Logf("recovered %v after the lease ended (recover interval %v)", late, recoverEvery)
	if late < 0 || late > recoverEvery+time.Second {
		t.Errorf("recovered %v after the lease ended, want within about %v", late, recoverEvery)
	}
	if retried.Record.Attempt != 1 || !strings.Contains(retried.Record.LastError, "lease expired") {
		t.Errorf("retried = %+v", retried.Record)
	}
	if last := get("last-attempt"); !strings.Contains(last.Record.LastError, "no attempts left") {
		t.Errorf("last-attempt = %+v", last.Record)
	}
}

func TestTrimAndSampleDuties(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	st := store.New(testkit.Single(t), prefix, nil)
	ctx := t.Context()
	// Three dead jobs and one due, before anyone leads.
	if _, err := st.Enqueue(ctx, testQueue, []store.NewJob{{ID: "d1"}, {ID: "d2"}, {ID: "d3"}}); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}
	claimed, err := st.Claim(ctx, testQueue, 10, time.Hour)
	if err != nil || len(claimed.Jobs) != 3 {
		t.Fatalf("Claim = %+v, %v; want 3 jobs", claimed, err)
	}
	for _, r := range claimed.Jobs {
		if ok, err := st.Kill(ctx, testQueue, r.Token(), "test"); !ok || err != nil {
			t.Fatalf("Kill(%s) = %v, %v", r.ID, ok, err)
		}
	}
	if _, err := st.Enqueue(ctx, testQueue, []store.NewJob{{ID: "ready"}}); err != nil {
		t.Fatalf("Enqueue: %v", err)
	}

	samples := make(chan string, 256)
	var mu sync.Mutex
	var last store.Stats
	cfg := func(name string) Config {
		return Config{DeadMaxJobs: 1, SampleInterval: 50 * time.Millisecond, OnSample: func(queue string, s store.Stats) {
			if queue != testQueue {
				t.Errorf("sample of queue %q", queue)
			}
			mu.Lock()
			last = s
			mu.Unlock()
			select {
			case samples <- name:
			default:
			}
		}}
	}
	queues := []Queue{{Name: testQueue, MaxAttempts: 3}}
	a := startNode(t, prefix, "a", queues, cfg("a"))
	b := startNode(t, prefix, "b", queues, cfg("b"))
	leader, _ := waitLeader(t, a, b)

	// Trim runs at once on a new leader: one dead job is kept.
	testkit.Eventually(t, 10*time.Second, "trim", func() bool {
		s, err := st.Stats(ctx, testQueue)
		return err == nil && s.Dead == 1
	})
	// Only the leader samples, and it sees the trimmed queue.
	testkit.Eventually(t, 10*time.Second, "a sample after the trim", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return last.Dead == 1
	})
	for range 3 {
		select {
		case name := <-samples:
			if name != leader.name {
				t.Errorf("%s sampled; %s leads", name, leader.name)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("no sample within 5s")
		}
	}
	mu.Lock()
	if last != (store.Stats{Ready: 1, Dead: 1}) {
		t.Errorf("last sample = %+v, want 1 ready and 1 dead", last)
	}
	mu.Unlock()
	// The sample carries the pause flag, for courier_queue_paused.
	if _, err := st.Pause(ctx, testQueue); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	testkit.Eventually(t, 10*time.Second, "a sample of the paused queue", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return last == store.Stats{Ready: 1, Dead: 1, Paused: true}
	})
}

// TestLeaderForgetsUnusedQueues: the leader of the process's first queue
// removes a queue that no longer holds jobs and that nothing serves from
// the set of known queues; its own queues stay.
func TestLeaderForgetsUnusedQueues(t *testing.T) {
	t.Parallel()
	prefix := testkit.Prefix(t)
	rdb := testkit.Single(t)
	st := store.New(rdb, prefix, nil)
	if err := st.AddQueues(t.Context(), "gone", testQueue); err != nil {
		t.Fatal(err)
	}
	n := startNode(t, prefix, "a", []Queue{{Name: testQueue, MaxAttempts: 3}},
		Config{RecoverInterval: time.Second, ForgetQueuesInterval: 50 * time.Millisecond})
	waitLeader(t, n)
	testkit.Eventually(t, 10*time.Second, "the unused queue to be forgotten", func() bool {
		names, err := st.Queues(t.Context())
		return err == nil && slices.Equal(names, []string{testQueue})
	})
}
