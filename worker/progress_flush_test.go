package worker_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

// TestProgressVisibleWithinASecond: with the default lease (30 s, renewed
// every 10 s), a handler's report is seen by Get within a second, on
// single Redis and a Cluster, partitioned queue included: 50 reports at
// random moments, and a reader polling Get every 2 ms, give the latency's
// median and p99.
// A storm of reports (10 jobs, 1,000 reports a second between them) costs
// about one extension call a second: flushes, not calls per report.
func TestProgressVisibleWithinASecond(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, rdb rueidis.Client, prefix string) {
		cfg := testConfig(t, prefix)
		cfg.Lease = worker.LeaseDefault
		reg := prometheus.NewRegistry()
		cfg.Registerer = reg
		const reports, storm = 50, 10
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		type report struct {
			n  int
			at time.Time
		}
		sent := make(chan report)
		next := make(chan struct{})
		stormDone := make(chan struct{})
		var stormers sync.WaitGroup
		h := worker.HandlerFunc(func(ctx context.Context, job *worker.Job) error {
			if string(job.Payload) == "storm" {
				defer stormers.Done()
				t := time.NewTicker(10 * time.Millisecond) // 100 a second per job
				defer t.Stop()
				for i := 0; ; i++ {
					select {
					case <-stormDone:
						return nil
					case <-ctx.Done():
						return ctx.Err()
					case <-t.C:
						_ = job.ReportProgress(float64(i%100), "storm")
					}
				}
			}
			for i := 1; i <= reports; i++ {
				select {
				case <-next:
				case <-ctx.Done():
					return ctx.Err()
				}
				if err := job.ReportProgress(float64(i), fmt.Sprint("report ", i)); err != nil {
					return err
				}
				sent <- report{i, time.Now()}
			}
			<-next
			return nil
		})
		c := newClient(t, rdb, cfg)
		startDaemon(t, rdb, register(t, nil, "pq", h, worker.QueueOptions{Concurrency: storm + 1, Partitions: 2}), cfg)
		id := enqueue(t, c, worker.JobSpec{Queue: "pq"})

		// A reader polls Get every 2 ms and notes when each report is
		// first seen (or a later one: readers see the newest).
		seen := make([]time.Time, reports+1)
		var mu sync.Mutex
		pollCtx, stopPoll := context.WithCancel(t.Context())
		polled := make(chan struct{})
		go func() {
			defer close(polled)
			for pollCtx.Err() == nil {
				job, err := c.Get(pollCtx, "pq", id)
				now := time.Now()
				if err == nil && job.Progress != nil {
					mu.Lock()
					for i := int(job.Progress.Percent); i >= 1 && seen[i].IsZero(); i-- {
						seen[i] = now
					}
					mu.Unlock()
				}
				time.Sleep(2 * time.Millisecond) //nolint:forbidigo // the reader's poll interval
			}
		}()
		at := make([]time.Time, reports+1)
		for range reports {
			time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond) //nolint:forbidigo // reports at random moments
			next <- struct{}{}
			r := receive(t, sent, 10*time.Second, "the report")
			at[r.n] = r.at
		}
		testkit.Eventually(t, 5*time.Second, "every report seen by Get", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return !seen[reports].IsZero()
		})
		stopPoll()
		<-polled
		var lat []time.Duration
		for i := 1; i <= reports; i++ {
			lat = append(lat, seen[i].Sub(at[i]))
		}
		next <- struct{}{}
		slices.Sort(lat)
		median, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		t.Logf("report to Get, %d reports, lease %v: min %v, median %v, p99 %v, max %v", reports, cfg.Lease, lat[0], median, p99, lat[len(lat)-1])
		if p99 > time.Second {
			t.Errorf("p99 latency of a report to Get %v; want at most 1s", p99)
		}

		// The storm: 10 jobs, each reporting 100 times a second.
		stormers.Add(storm)
		for range storm {
			enqueue(t, c, worker.JobSpec{Queue: "pq", Payload: []byte("storm")})
		}
		extends := func() float64 { return testkit.Metric(t, reg, "courier_redis_script_seconds", "script", "extend") }
		testkit.Eventually(t, 10*time.Second, "the storm's jobs running", func() bool {
			s, err := c.Op.Stats(t.Context(), "pq")
			return err == nil && s.Active == storm
		})
		before, start := extends(), time.Now()
		time.Sleep(3 * time.Second) //nolint:forbidigo // the storm runs for a while of the real clock
		calls, took := extends()-before, time.Since(start)
		close(stormDone)
		stormers.Wait()
		perSecond := calls / took.Seconds()
		t.Logf("storm: %d jobs × 100 reports/s for %v: %.0f extend calls (%.2f/s)", storm, took.Round(time.Millisecond), calls, perSecond)
		// Two partitions: a flush is one round trip carrying one call per
		// partition whose jobs reported.
		if perSecond > 2*1.5 {
			t.Errorf("%.2f extend calls a second under the storm; want about one flush a second (per partition)", perSecond)
		}
	})
}
