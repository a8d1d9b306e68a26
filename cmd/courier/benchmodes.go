package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// throughput enqueues n jobs in batches, then starts the pool and times it
// until every job is acked.
func (b *bench) throughput(ctx context.Context) (string, error) {
	o := b.opts
	producer, err := worker.NewClient(b.counted, b.config())
	if err != nil {
		return "", err
	}
	observer, err := worker.NewClient(b.rdb, b.config())
	if err != nil {
		return "", err
	}
	payload := b.payload()
	enqueue := func(n int, delay time.Duration) error {
		const chunk = 10000
		specs := make([]worker.JobSpec, 0, chunk)
		for done := 0; done < n; done += len(specs) {
			specs = specs[:0]
			for range min(chunk, n-done) {
				specs = append(specs, worker.JobSpec{Queue: benchQueue, Payload: payload, Delay: delay})
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
	slotKey := worker.QueueKeys(b.prefix, benchQueue)[0]
	before, err := quietSnapshot(ctx, b.rdb, slotKey)
	if err != nil {
		return "", err
	}
	start := time.Now()
	if err := enqueue(o.n, 0); err != nil {
		return "", fmt.Errorf("enqueue: %w", err)
	}
	enqueueTime := time.Since(start)
	afterEnqueue, err := snapshot(ctx, b.rdb, slotKey)
	if err != nil {
		return "", err
	}

	var ran atomic.Int64
	allStarted := make(chan struct{})
	processStart := time.Now()
	stop, err := b.startDaemon(ctx, worker.HandlerFunc(func(context.Context, *worker.Job) error {
		if ran.Add(1) == int64(o.n) {
			close(allStarted)
		}
		return nil
	}))
	if err != nil {
		return "", err
	}
	// Poll for the queue to drain only once every job has started, so the
	// polling does not load Redis during the measurement.
	var drainErr error
	select {
	case <-allStarted:
		drainErr = b.waitDrained(ctx, observer)
	case <-ctx.Done():
		drainErr = ctx.Err()
	}
	processTime := time.Since(processStart)
	if err := stop(); err != nil {
		return "", err
	}
	if drainErr != nil {
		return "", drainErr
	}
	after, err := snapshot(ctx, b.rdb, slotKey)
	if err != nil {
		return "", err
	}
	if ran.Load() < int64(o.n) {
		return "", fmt.Errorf("%w: %d of %d", errIncomplete, ran.Load(), o.n)
	}
	n := float64(o.n)
	line := fmt.Sprintf("mode=throughput n=%d concurrency=%d enqueue_per_s=%.0f process_per_s=%.0f end_to_end_per_s=%.0f redis_calls_per_job=%.4f redis_cpu_us_per_job=%.2f redis_bytes_per_job=%.0f",
		o.n, o.concurrency,
		n/enqueueTime.Seconds(), n/processTime.Seconds(), n/(enqueueTime+processTime).Seconds(),
		float64(clientCalls(before, after))/n,
		(after.cpuSec-before.cpuSec)*1e6/n,
		float64(afterEnqueue.memory-before.memory)/n)
	if o.backlog > 0 {
		line += fmt.Sprintf(" backlog=%d", o.backlog)
	}
	return line, nil
}

// lagRecorder collects handler start lags.
type lagRecorder struct {
	mu   sync.Mutex
	lags []time.Duration
	want int
	done chan struct{}
}

func newLagRecorder(want int) *lagRecorder {
	return &lagRecorder{want: want, done: make(chan struct{}), lags: make([]time.Duration, 0, want)}
}

func (r *lagRecorder) add(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lags = append(r.lags, d)
	if len(r.lags) == r.want {
		close(r.done)
	}
}

// wait waits for every job or for ctx, and returns the sorted lags.
func (r *lagRecorder) wait(ctx context.Context) []time.Duration {
	select {
	case <-r.done:
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	lags := slices.Clone(r.lags)
	slices.Sort(lags)
	return lags
}

// lagRun starts a daemon whose handler records lag(job) for every job, and
// lets it subscribe and settle before the first job is sent.
func (b *bench) lagRun(ctx context.Context, lag func(*worker.Job) time.Duration) (*lagRecorder, *worker.Client, func() error, error) {
	producer, err := worker.NewClient(b.counted, b.config())
	if err != nil {
		return nil, nil, nil, err
	}
	rec := newLagRecorder(b.opts.n)
	stop, err := b.startDaemon(ctx, worker.HandlerFunc(func(_ context.Context, j *worker.Job) error {
		rec.add(lag(j))
		return nil
	}))
	if err != nil {
		return nil, nil, nil, err
	}
	if !sleep(ctx, 500*time.Millisecond) {
		stop()
		return nil, nil, nil, ctx.Err()
	}
	return rec, producer, stop, nil
}

// latency sends a job every --every to an idle pool and measures the time
// from enqueue to handler start.
func (b *bench) latency(ctx context.Context) (string, error) {
	o := b.opts
	rec, producer, stop, err := b.lagRun(ctx, func(j *worker.Job) time.Duration {
		sent := int64(binary.BigEndian.Uint64(j.Payload))
		return time.Duration(time.Now().UnixNano() - sent)
	})
	if err != nil {
		return "", err
	}
	defer stop()
	payload := b.payload()
	if len(payload) < 8 {
		payload = make([]byte, 8)
	}
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	for range o.n {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		}
		p := slices.Clone(payload)
		binary.BigEndian.PutUint64(p, uint64(time.Now().UnixNano()))
		if _, err := producer.Enqueue(ctx, worker.JobSpec{Queue: benchQueue, Payload: p}); err != nil {
			return "", err
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	lags := rec.wait(waitCtx)
	if len(lags) < o.n {
		return "", fmt.Errorf("%w: %d of %d", errIncomplete, len(lags), o.n)
	}
	return fmt.Sprintf("mode=latency n=%d every=%s got=%d lag_p50_ms=%s lag_p99_ms=%s lag_max_ms=%s",
		o.n, o.every, len(lags), ms(percentile(lags, 50)), ms(percentile(lags, 99)), ms(lags[len(lags)-1])), nil
}

// delayed schedules n jobs --delay ahead, 1 ms apart, and measures from each
// job's run-at to its handler's start (negative = early).
func (b *bench) delayed(ctx context.Context) (string, error) {
	o := b.opts
	rec, producer, stop, err := b.lagRun(ctx, func(j *worker.Job) time.Duration { return time.Since(j.RunAt) })
	if err != nil {
		return "", err
	}
	defer stop()
	first := time.Now().Add(o.delay).Truncate(time.Millisecond)
	specs := make([]worker.JobSpec, o.n)
	for i := range specs {
		specs[i] = worker.JobSpec{Queue: benchQueue, Payload: b.payload(), RunAt: first.Add(time.Duration(i) * time.Millisecond)}
	}
	if _, err := producer.EnqueueMany(ctx, specs); err != nil {
		return "", err
	}
	if time.Now().After(first) {
		return "", fmt.Errorf("enqueueing took longer than --delay %s: use a longer delay", o.delay)
	}
	waitCtx, cancel := context.WithTimeout(ctx, o.delay+time.Duration(o.n)*time.Millisecond+30*time.Second)
	defer cancel()
	lags := rec.wait(waitCtx)
	if len(lags) < o.n {
		return "", fmt.Errorf("%w: %d of %d", errIncomplete, len(lags), o.n)
	}
	return fmt.Sprintf("mode=delayed n=%d delay=%s got=%d lag_min_ms=%s lag_p50_ms=%s lag_p99_ms=%s lag_max_ms=%s",
		o.n, o.delay, len(lags), ms(lags[0]), ms(percentile(lags, 50)), ms(percentile(lags, 99)), ms(lags[len(lags)-1])), nil
}

// idle watches an idle pool and counts the commands it sends.
func (b *bench) idle(ctx context.Context) (string, error) {
	stop, err := b.startDaemon(ctx, worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil }))
	if err != nil {
		return "", err
	}
	defer stop()
	if !sleep(ctx, time.Second) { // start-up traffic is not idle traffic
		return "", ctx.Err()
	}
	startCount := b.counted.n.Load()
	if !sleep(ctx, b.opts.duration) {
		return "", ctx.Err()
	}
	cmds := b.counted.n.Load() - startCount
	return fmt.Sprintf("mode=idle queues=1 seconds=%.0f redis_cmds=%d redis_cmds_per_s=%.2f",
		b.opts.duration.Seconds(), cmds, float64(cmds)/b.opts.duration.Seconds()), nil
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
