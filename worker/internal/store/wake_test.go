package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// noWakeWait is how long a test listens to be sure no wake-up comes.
const noWakeWait = 200 * time.Millisecond

// subscribe listens to queue's wake-ups until the test ends and returns the
// run-ats announced, in order. Subscribe before the first write: on a
// cluster, a message published on another node shortly before the
// subscription can still be delivered after it (the cluster bus forwards
// messages asynchronously).
func subscribe(t *testing.T, s *store.Store, q string) <-chan int64 {
	t.Helper()
	wakes := make(chan int64, 64)
	subscribed := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		done <- s.Subscribe(ctx, []string{q}, func(got string, runAt int64) {
			if got != q {
				t.Errorf("wake-up for queue %q, want %q", got, q)
			}
			wakes <- runAt
		}, nil, func() {
			select {
			case subscribed <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("Subscribe returned %v, want context.Canceled", err)
		}
	})
	select {
	case <-subscribed:
	case err := <-done:
		t.Fatalf("Subscribe: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("no subscription within 10s")
	}
	return wakes
}

// nextWake returns the next wake-up, failing when none comes within 5s.
func nextWake(t *testing.T, wakes <-chan int64) int64 {
	t.Helper()
	select {
	case at := <-wakes:
		return at
	case <-time.After(5 * time.Second):
		t.Fatal("no wake-up within 5s")
		return 0
	}
}

// noWake fails when a wake-up arrives within noWakeWait.
func noWake(t *testing.T, wakes <-chan int64) {
	t.Helper()
	select {
	case at := <-wakes:
		t.Errorf("unexpected wake-up for run-at %d", at)
	case <-time.After(noWakeWait):
	}
}

func TestEnqueueWakesWhenNewHead(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		wakes := subscribe(t, s, queue)

		// The first job is the head of an empty queue.
		enqueue(t, s, store.NewJob{ID: "in-1h", Delay: time.Hour})
		if got, want := nextWake(t, wakes), mustScore(t, c, k.Due, "in-1h"); got != want {
			t.Errorf("wake-up run-at = %d, want %d", got, want)
		}

		// Later than the head, or not added: no wake-up. Messages on one
		// channel arrive in order, so the next one must be the sentinel's.
		enqueue(t, s, store.NewJob{ID: "in-2h", Delay: 2 * time.Hour})
		if added, err := s.Enqueue(t.Context(), queue, []store.NewJob{{ID: "in-1h"}}); err != nil || added[0] {
			t.Fatalf("enqueue of an existing id = %v, %v", added, err)
		}
		enqueue(t, s, store.NewJob{ID: "now"})
		if got, want := nextWake(t, wakes), mustScore(t, c, k.Due, "now"); got != want {
			t.Errorf("wake-up run-at = %d, want %d (the job due now)", got, want)
		}

		// A batch announces its earliest job once, when it beats the head.
		head := mustScore(t, c, k.Due, "now")
		enqueue(t, s,
			store.NewJob{ID: "in-3h", Delay: 3 * time.Hour},
			store.NewJob{ID: "earlier", At: time.UnixMilli(head - 1000)},
			store.NewJob{ID: "earliest", At: time.UnixMilli(head - 2000)},
		)
		if got := nextWake(t, wakes); got != head-2000 {
			t.Errorf("wake-up run-at = %d, want %d (the batch's earliest)", got, head-2000)
		}
		enqueue(t, s, store.NewJob{ID: "tie", At: time.UnixMilli(head - 2000)}) // not earlier
		enqueue(t, s, store.NewJob{ID: "later", Delay: time.Minute})
		noWake(t, wakes)
	})
}

func TestScriptsWakeWhenDueEarlier(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		k := s.Keys(queue)
		wakes := subscribe(t, s, queue)
		enqueue(t, s, job("a", ""), job("b", ""), job("c", ""))
		nextWake(t, wakes)
		got := claim(t, s, 3, time.Hour)
		if len(got.Jobs) != 3 {
			t.Fatalf("claimed %d jobs, want 3", len(got.Jobs))
		}
		enqueue(t, s, store.NewJob{ID: "head", Delay: time.Hour})
		if at := nextWake(t, wakes); at != mustScore(t, c, k.Due, "head") {
			t.Fatalf("wake-up = %d, want the head's run-at", at)
		}

		// retry to due sooner than the head: wakes
		before := testkit.RedisNow(t, c)
		if ok, err := s.Retry(t.Context(), queue, got.Jobs[0].Token(), 0, "e"); !ok || err != nil {
			t.Fatalf("Retry = %v, %v", ok, err)
		}
		inRange(t, "retry wake-up", nextWake(t, wakes), before, testkit.RedisNow(t, c))

		// snooze to later than the head: silent
		if n, err := s.Snooze(t.Context(), queue, []store.Token{got.Jobs[1].Token()}, 2*time.Hour); n != 1 || err != nil {
			t.Fatalf("Snooze = %d, %v", n, err)
		}
		// requeue now, with the retried job gone from the head: wakes
		if ok, err := s.Kill(t.Context(), queue, got.Jobs[2].Token(), "e"); !ok || err != nil {
			t.Fatalf("Kill = %v, %v", ok, err)
		}
		if res, err := s.Cancel(t.Context(), queue, got.Jobs[0].ID); res != store.Cancelled || err != nil {
			t.Fatalf("Cancel = %v, %v", res, err)
		}
		before = testkit.RedisNow(t, c)
		if moved, err := s.Requeue(t.Context(), queue, store.SetDead, []string{got.Jobs[2].ID}); err != nil || !moved[0] {
			t.Fatalf("Requeue = %v, %v", moved, err)
		}
		// In order: had the snooze published, its message would come first.
		inRange(t, "requeue wake-up", nextWake(t, wakes), before, testkit.RedisNow(t, c))

		// snooze sooner than the head: wakes
		r := claimOne(t, s, time.Hour)
		before = testkit.RedisNow(t, c)
		if n, err := s.Snooze(t.Context(), queue, []store.Token{r.Token()}, 0); n != 1 || err != nil {
			t.Fatalf("Snooze = %d, %v", n, err)
		}
		inRange(t, "snooze wake-up", nextWake(t, wakes), before, testkit.RedisNow(t, c))
		noWake(t, wakes)
	})
}

// TestWakeUpsUseShardedPubSub: the subscription is a sharded one, on the
// node that serves the queue's slot, so PUBLISH's broadcast to every node
// of a Cluster is not needed; the scripts' wake-ups reach it.
func TestWakeUpsUseShardedPubSub(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, s *store.Store, c rueidis.Client) {
		wakes := subscribe(t, s, queue)
		ch := s.Keys(queue).Wake
		vals, err := c.Do(t.Context(), c.B().PubsubShardnumsub().Channel(ch).Build()).ToArray()
		if err != nil || len(vals) != 2 {
			t.Fatalf("PUBSUB SHARDNUMSUB %s = %v, %v", ch, vals, err)
		}
		if n, _ := vals[1].AsInt64(); n != 1 {
			t.Fatalf("%d sharded subscribers of %s, want 1: the wake-ups are not on sharded pub/sub", n, ch)
		}
		if _, err := s.Enqueue(t.Context(), queue, []store.NewJob{{ID: "j"}}); err != nil {
			t.Fatal(err)
		}
		nextWake(t, wakes)
	})
}
