package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// throughput enqueues n jobs in batches, then starts the pool and times it
// until every job is acked.
func (b *bench) throughput(ctx context.Context) (string, error) {
	o := b.opts
	if o.trace {
		tr, err := startTracing(ctx)
		if err != nil {
			return "", err
		}
		b.tracing = tr
		// Checked below on success; here for a run that fails.
		defer func() { _ = tr.close(ctx) }()
	}
	producer, err := worker.NewClient(b.counted, b.config())
	if err != nil {
		return "", err
	}
	observer, err := admin.NewClient(b.rdb, b.config())
	if err != nil {
		return "", err
	}
	payload := b.payload()
	enqueue := func(n int, delay time.Duration) error {
		const chunk = 10000
		specs := make([]worker.JobSpec, 0, chunk)
		for done := 0; done < n; done += len(specs) {
			specs = specs[:0]
			for i := range min(chunk, n-done) {
				spec := worker.JobSpec{Queue: queue, Payload: payload, Delay: delay}
				if o.unique {
					spec.UniqueKey = fmt.Sprintf("k%d-%d", delay, done+i)
				}
				specs = append(specs, spec)
			}
			if _, err := producer.EnqueueMany(ctx, specs); err != nil {
				return err
			}
		}
		return nil
	}
	if o.backlog > 0 {
		if err := enqueue(o.backlog, time.Hour); err != nil {
			return "", fmt.Errorf("enqueue the backlog: %w", err)
		}
	}
	ms, closeMasters, err := findMasters(ctx, b.rdb, o.addr)
	if err != nil {
		return "", err
	}
	defer closeMasters()
	if err := placePartitions(ctx, b.rdb, ms, b.prefix, o.partitions); err != nil {
		return "", err
	}
	var ph phases
	jobsBefore, err := partitionJobs(ctx, b.rdb, b.prefix, o.partitions)
	if err != nil {
		return "", err
	}
	if ph.before, err = quietSnapshots(ctx, ms); err != nil {
		return "", err
	}
	start := time.Now()
	if err := enqueue(o.n, 0); err != nil {
		return "", fmt.Errorf("enqueue: %w", err)
	}
	enqueueTime := time.Since(start)
	if ph.afterEnqueue, err = snapshots(ctx, ms); err != nil {
		return "", err
	}
	// The jobs each partition gained: every one of them is then processed.
	if ph.jobs, err = partitionJobs(ctx, b.rdb, b.prefix, o.partitions); err != nil {
		return "", err
	}
	for i := range ph.jobs {
		ph.jobs[i] -= jobsBefore[i]
	}

	var ran atomic.Int64
	var handlerErr atomic.Pointer[error]
	allStarted := make(chan struct{})
	result := []byte("0123456789abcdef") // --retain: 16 bytes, shared read-only by every job
	processStart := time.Now()
	stop, err := b.startDaemon(ctx, worker.HandlerFunc(func(_ context.Context, j *worker.Job) error {
		if ran.Add(1) == int64(o.n) {
			close(allStarted)
		}
		err := b.handlerExtras(j, result)
		if err != nil {
			handlerErr.CompareAndSwap(nil, &err)
		}
		return err
	}))
	if err != nil {
		return "", err
	}
	drainErr := b.waitStartedDrained(ctx, allStarted, observer)
	processTime := time.Since(processStart)
	if err := stop(); err != nil {
		return "", err
	}
	if drainErr != nil {
		return "", drainErr
	}
	if err := handlerErr.Load(); err != nil {
		return "", fmt.Errorf("handler: %w", *err)
	}
	if b.tracing != nil {
		if err := b.tracing.close(ctx); err != nil {
			return "", err
		}
	}
	if ph.after, err = snapshots(ctx, ms); err != nil {
		return "", err
	}
	if ran.Load() < int64(o.n) {
		return "", fmt.Errorf("%w: %d of %d", errIncomplete, ran.Load(), o.n)
	}
	var kept int64 // --retain: the completed jobs the queue holds, read after the measurement
	if o.retain > 0 {
		s, err := observer.Stats(ctx, queue)
		if err != nil {
			return "", err
		}
		kept = s.Completed
	}
	n := float64(o.n)
	calls, cpuSec, enqueueCPUSec, bytes := ph.totals(ms)
	line := fmt.Sprintf("mode=throughput n=%d concurrency=%d enqueue_per_s=%.0f process_per_s=%.0f end_to_end_per_s=%.0f redis_calls_per_job=%.4f redis_cpu_us_per_job=%.2f enqueue_redis_cpu_us_per_job=%.2f redis_bytes_per_job=%.0f",
		o.n, o.concurrency,
		n/enqueueTime.Seconds(), n/processTime.Seconds(), n/(enqueueTime+processTime).Seconds(),
		float64(calls)/n, cpuSec*1e6/n, enqueueCPUSec*1e6/n, float64(bytes)/n)
	if o.backlog > 0 {
		line += fmt.Sprintf(" backlog=%d", o.backlog)
	}
	if o.unique {
		line += " unique=true"
	}
	if o.retain > 0 {
		line += fmt.Sprintf(" retain=%d completed=%d", o.retain, kept)
	}
	if o.progress {
		line += " progress=true"
	}
	if b.tracing != nil {
		line += b.tracing.figures(o.n)
	}
	if extra := ran.Load() - int64(o.n); extra > 0 {
		// Handler starts beyond one a job (a job claimed again after a
		// lost lease, say): shown, as no run should have any.
		line += fmt.Sprintf(" extra_runs=%d", extra)
	}
	line += fmt.Sprintf(" partitions=%d", o.partitions)
	if b.rdb.Mode() == rueidis.ClientModeCluster {
		line += fmt.Sprintf(" masters=%d", len(ms)) + ph.perMaster(ms)
	}
	return line, nil
}

// handlerExtras is the handler's work beyond counting, as the flags ask:
// a progress report (--progress) and a result to keep (--retain).
func (b *bench) handlerExtras(j *worker.Job, result []byte) error {
	if b.opts.progress {
		if err := j.ReportProgress(50, "half"); err != nil {
			return err
		}
	}
	if b.opts.retain > 0 {
		return j.SetResult(result)
	}
	return nil
}

// waitStartedDrained waits until allStarted is closed (every job has
// started), then until the bench queue is drained: the queue is polled only
// then, so that the polling does not load Redis during the measurement.
func (b *bench) waitStartedDrained(ctx context.Context, allStarted <-chan struct{}, c *admin.Client) error {
	select {
	case <-allStarted:
		return b.waitDrained(ctx, c)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitDrained waits until the bench queue has no ready or active jobs.
func (b *bench) waitDrained(ctx context.Context, c *admin.Client) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		s, err := c.Stats(ctx, queue)
		if err != nil {
			return err
		}
		if s.Ready == 0 && s.Active == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the queue to drain (%d ready, %d active): %w", s.Ready, s.Active, ctx.Err())
		case <-t.C:
		}
	}
}
