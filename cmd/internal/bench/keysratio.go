package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// ratioFigures are the throughput ratio phase's: the same number of jobs
// without a key, then with keys, each half enqueued first and then
// processed by the fleet until the queue is empty.
type ratioFigures struct {
	unkeyed, keyed half
	// bytesPerKeyedJob is the memory a keyed job takes on a key that
	// already has jobs; bytesPerKey what a key takes besides its jobs
	// (its entries in the sets of ready keys, waiting jobs per key, ...):
	// the first --keys jobs each start a key, the rest join one.
	bytesPerKeyedJob, bytesPerKey float64
}

// half is one half of the ratio: jobs/s enqueued and processed, the Redis
// CPU per job processed (summed over the masters) and the memory per job
// enqueued.
type half struct {
	enqueuePerS, processPerS, cpuUSPerJob, bytesPerJob float64
}

func (r ratioFigures) ratio() float64 { return r.keyed.processPerS / r.unkeyed.processPerS }

func (r ratioFigures) figures(o options) string {
	return fmt.Sprintf(" ratio_n=%d unkeyed_enqueue_per_s=%.0f unkeyed_process_per_s=%.0f unkeyed_redis_cpu_us_per_job=%.2f bytes_per_job=%.0f"+
		" keyed_enqueue_per_s=%.0f keyed_process_per_s=%.0f keyed_redis_cpu_us_per_job=%.2f bytes_per_keyed_job=%.0f",
		o.keys.ratioN, r.unkeyed.enqueuePerS, r.unkeyed.processPerS, r.unkeyed.cpuUSPerJob, r.unkeyed.bytesPerJob,
		r.keyed.enqueuePerS, r.keyed.processPerS, r.keyed.cpuUSPerJob, r.bytesPerKeyedJob)
}

// keysRatio runs the ratio phase on the bench queue: --ratio-n jobs without
// a key, then --ratio-n jobs over --keys keys (the first --keys jobs one a
// key, then the others in turn), no cap. Both halves run the same fleet
// with the same settings.
func (b *bench) keysRatio(ctx context.Context, ms []*master) (ratioFigures, error) {
	o := b.opts
	n, k := o.keys.ratioN, o.keys.active
	var r ratioFigures
	producer, err := worker.NewClient(b.counted, b.config())
	if err != nil {
		return r, err
	}
	observer, err := admin.NewClient(b.rdb, b.config())
	if err != nil {
		return r, err
	}
	payload := b.payload()

	before, err := quietSnapshots(ctx, ms)
	if err != nil {
		return r, err
	}
	start := time.Now()
	if err := enqueueEach(ctx, producer, n, func(int) worker.JobSpec { return worker.JobSpec{Queue: queue, Payload: payload} }); err != nil {
		return r, fmt.Errorf("enqueue: %w", err)
	}
	enqueued := time.Since(start)
	if r.unkeyed, err = b.processHalf(ctx, ms, observer, before, enqueued); err != nil {
		return r, err
	}

	names := keyNames("k", k)
	if before, err = quietSnapshots(ctx, ms); err != nil {
		return r, err
	}
	start = time.Now()
	if err := enqueueEach(ctx, producer, k, func(i int) worker.JobSpec {
		return worker.JobSpec{Queue: queue, Key: names[i], Payload: payload}
	}); err != nil {
		return r, fmt.Errorf("enqueue: %w", err)
	}
	enqueued = time.Since(start)
	mid, err := snapshots(ctx, ms)
	if err != nil {
		return r, err
	}
	start = time.Now()
	if err := enqueueEach(ctx, producer, n-k, func(i int) worker.JobSpec {
		return worker.JobSpec{Queue: queue, Key: names[i%k], Payload: payload}
	}); err != nil {
		return r, fmt.Errorf("enqueue: %w", err)
	}
	enqueued += time.Since(start)
	afterMid, err := snapshots(ctx, ms)
	if err != nil {
		return r, err
	}
	r.bytesPerKeyedJob = float64(memory(afterMid)-memory(mid)) / float64(n-k)
	r.bytesPerKey = float64(memory(mid)-memory(before))/float64(k) - r.bytesPerKeyedJob
	if r.keyed, err = b.processHalf(ctx, ms, observer, before, enqueued); err != nil {
		return r, err
	}
	return r, nil
}

// processHalf reads the masters after an enqueue of --ratio-n jobs that
// took enqueued (from before), then processes them: the fleet runs until
// every job has started and the queue is empty.
func (b *bench) processHalf(ctx context.Context, ms []*master, observer *admin.Client, before []serverStats, enqueued time.Duration) (half, error) {
	n := b.opts.keys.ratioN
	afterEnqueue, err := snapshots(ctx, ms)
	if err != nil {
		return half{}, err
	}
	var ran atomic.Int64
	allStarted := make(chan struct{})
	start := time.Now()
	stop, err := b.startFleet(ctx, queue, b.keyOptions(0), worker.HandlerFunc(func(context.Context, *worker.Job) error {
		if ran.Add(1) == int64(n) {
			close(allStarted)
		}
		return nil
	}))
	if err != nil {
		return half{}, err
	}
	drainErr := b.waitStartedDrained(ctx, allStarted, observer)
	took := time.Since(start)
	if err := stop(); err != nil {
		return half{}, err
	}
	if drainErr != nil {
		return half{}, drainErr
	}
	if ran.Load() < int64(n) {
		return half{}, fmt.Errorf("%w: %d of %d", errIncomplete, ran.Load(), n)
	}
	after, err := snapshots(ctx, ms)
	if err != nil {
		return half{}, err
	}
	f := float64(n)
	return half{
		enqueuePerS: f / enqueued.Seconds(),
		processPerS: f / took.Seconds(),
		cpuUSPerJob: (cpu(after) - cpu(afterEnqueue)) * 1e6 / f,
		bytesPerJob: float64(memory(afterEnqueue)-memory(before)) / f,
	}, nil
}

// memory sums used_memory over the masters.
func memory(ss []serverStats) int64 {
	var n int64
	for _, s := range ss {
		n += s.memory
	}
	return n
}

// cpu sums the CPU seconds of the masters.
func cpu(ss []serverStats) float64 {
	var n float64
	for _, s := range ss {
		n += s.cpuSec
	}
	return n
}
