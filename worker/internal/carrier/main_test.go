package carrier

import (
	"cmp"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/lock"
)

func TestMain(m *testing.M) { testkit.Main(m) }

const (
	// testQueue is the queue the tests elect for; every test has its own
	// key prefix.
	testQueue = "q"
	// testLease is the lock clients' watchdog lease: renewals every 100ms.
	testLease = 300 * time.Millisecond
)

// node is one process of the fleet: its own Redis connection, lock client
// and Carrier, all sharing the test's key prefix.
type node struct {
	name  string
	rdb   rueidis.Client
	st    *store.Store
	locks *lock.Client
	c     *Carrier
	// events receives every OnLeader call for testQueue, in order.
	events chan bool

	cancel context.CancelFunc
	done   chan struct{}
	once   sync.Once
}

// startNode starts a Carrier for queues under prefix and stops it at
// cleanup. cfg.OnLeader, when set, is called after the node's own event is
// recorded.
func startNode(t *testing.T, prefix, name string, queues []Queue, cfg Config) *node {
	t.Helper()
	return startNodeOn(t, testkit.Single(t), prefix, name, queues, cfg)
}

// startNodeOn is startNode on a Redis client of the test's choosing.
func startNodeOn(t *testing.T, rdb rueidis.Client, prefix, name string, queues []Queue, cfg Config) *node {
	t.Helper()
	return startNodeLease(t, rdb, prefix, name, queues, cfg, testLease)
}

// startNodeLease is startNodeOn with a leader lease of the test's choosing.
func startNodeLease(t *testing.T, rdb rueidis.Client, prefix, name string, queues []Queue, cfg Config, lease time.Duration) *node {
	t.Helper()
	locks, err := lock.NewClient(rdb, lock.Options{Lease: lease})
	if err != nil {
		t.Fatalf("lock.NewClient: %v", err)
	}
	t.Cleanup(locks.Close)
	n := &node{name: name, rdb: rdb, st: store.New(rdb, prefix, nil), locks: locks, events: make(chan bool, 64), done: make(chan struct{})}
	hook := cfg.OnLeader
	cfg.OnLeader = func(queue string, leading bool) {
		if queue == testQueue {
			n.events <- leading
		}
		if hook != nil {
			hook(queue, leading)
		}
	}
	// The daemon's defaults where the test sets none (the package cannot
	// import worker, which imports it).
	cfg.RecoverInterval = cmp.Or(cfg.RecoverInterval, time.Second)
	cfg.DeadMaxJobs = cmp.Or(cfg.DeadMaxJobs, 10000)
	cfg.DeadMaxAge = cmp.Or(cfg.DeadMaxAge, 30*24*time.Hour)
	cfg.HistoryRetention = cmp.Or(cfg.HistoryRetention, 24*time.Hour)
	c, err := New(n.st, locks, locks.Field, queues, cfg)
	if err != nil {
		t.Fatal(err)
	}
	n.c = c
	ctx, cancel := context.WithCancel(t.Context())
	n.cancel = cancel
	go func() {
		defer close(n.done)
		if err := n.c.Run(ctx); err != nil {
			t.Errorf("%s: Run: %v", name, err)
		}
	}()
	t.Cleanup(func() { n.stop(t) })
	return n
}

// stop cancels the node's Run and waits for it to return.
func (n *node) stop(t *testing.T) {
	t.Helper()
	n.once.Do(n.cancel)
	select {
	case <-n.done:
	case <-time.After(10 * time.Second):
		t.Errorf("%s: Run did not return within 10s of its context's end", n.name)
	}
}

// field is the node's field in the leader lock, the one its duties pass.
func (n *node) field() string { return n.locks.Field(holder) }

// nextEvent returns the node's next leadership change, failing after
// timeout.
func (n *node) nextEvent(t *testing.T, timeout time.Duration) bool {
	t.Helper()
	select {
	case on := <-n.events:
		return on
	case <-time.After(timeout):
		t.Fatalf("%s: no leadership change within %v", n.name, timeout)
		return false
	}
}

// quiet fails when the node's leadership changes within d.
func (n *node) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case on := <-n.events:
		t.Errorf("%s: unexpected leadership change to %v", n.name, on)
	case <-time.After(d):
	}
}

// waitLeader waits until exactly one of nodes leads testQueue and returns
// it and the others.
func waitLeader(t *testing.T, nodes ...*node) (*node, []*node) {
	t.Helper()
	var leader *node
	testkit.Eventually(t, 10*time.Second, "one leader", func() bool {
		leader = nil
		for _, n := range nodes {
			if n.c.Leading(testQueue) {
				if leader != nil {
					t.Fatalf("%s and %s both lead", leader.name, n.name)
				}
				leader = n
			}
		}
		return leader != nil
	})
	var others []*node
	for _, n := range nodes {
		if n != leader {
			others = append(others, n)
		}
	}
	return leader, others
}

// period is a Schedule firing at each multiple of itself since the zero
// time.
type period time.Duration

func (e period) Next(t time.Time) time.Time {
	return t.Truncate(time.Duration(e)).Add(time.Duration(e))
}
