package worker_test

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// TestEqualTokensInTwoQueuesRunApart: two queues that hand out the same
// claim token to jobs of the same id (on a Cluster each queue's tokens
// come from its own node's clock; here both queues' last token is set
// ahead of the clock, to the same value) run both jobs once each, their
// leases renewed throughout (issue 29, item 8): the daemon keys its runs by
// queue too.
func TestEqualTokensInTwoQueuesRunApart(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix) // lease 300ms
		queues := []string{"qa", "qb"}
		last := strconv.FormatInt(testkit.RedisNow(t, rdb)*1000+1_000_000_000_000, 10) // 11 days ahead, in µs
		for _, q := range queues {
			testkit.Do(t, rdb, rdb.B().Hset().Key(rediskeys.QueueKeys(prefix, q).Claims).FieldValue().FieldValue("", last).Build())
		}

		var mu sync.Mutex
		runs := map[string]int{}
		causes := make(chan error, 8)
		var started sync.WaitGroup
		started.Add(len(queues))
		both := make(chan struct{})
		go func() { started.Wait(); close(both) }()
		reg := worker.NewRegistry()
		for _, q := range queues {
			h := func(ctx context.Context, job *worker.Job) error {
				mu.Lock()
				runs[q]++
				first := runs[q] == 1
				mu.Unlock()
				if first {
					started.Done()
				}
				select {
				case <-both:
				case <-ctx.Done():
				}
				select {
				case <-time.After(3 * cfg.Lease): // its lease renewed, or it is lost
				case <-ctx.Done():
				}
				causes <- context.Cause(ctx)
				return ctx.Err()
			}
			register(t, reg, q, worker.HandlerFunc(h), worker.QueueOptions{})
		}
		c := newClient(t, rdb, cfg)
		for _, q := range queues {
			enqueue(t, c, worker.JobSpec{Queue: q, ID: "j"})
		}
		startDaemon(t, rdb, reg, cfg)

		receive(t, both, 10*time.Second, "both jobs to start")
		claims := make([]string, len(queues))
		for i, q := range queues {
			v, _ := testkit.HGet(t, rdb, rediskeys.QueueKeys(prefix, q).Claims, "j")
			claims[i], _, _ = strings.Cut(v, "@")
		}
		if claims[0] == "" || claims[0] != claims[1] {
			t.Fatalf("claims of j in qa and qb: %q; want the same token", claims)
		}
		for _, q := range queues {
			testkit.Eventually(t, 10*time.Second, "j of "+q+" acked", func() bool { return isGone(t, c, q, "j") })
		}
		for range queues {
			if err := receive(t, causes, 5*time.Second, "a handler's end"); err != nil {
				t.Errorf("a run of j ended with %v; want both to run to their end", err)
			}
		}
		mu.Lock()
		defer mu.Unlock()
		if runs["qa"] != 1 || runs["qb"] != 1 {
			t.Errorf("runs: %v; want j once in each queue", runs)
		}
	})
}
