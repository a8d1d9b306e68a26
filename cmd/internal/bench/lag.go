package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

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
		_ = stop() // ctx ended: its error says why
		return nil, nil, nil, ctx.Err()
	}
	return rec, producer, stop, nil
}

// latency sends a job every --every to an idle pool and measures the time
// from enqueue to handler start.
func (b *bench) latency(ctx context.Context) (string, error) {
	o := b.opts
	rec, producer, stop, err := b.lagRun(ctx, func(j *worker.Job) time.Duration {
		sent := int64(binary.BigEndian.Uint64(j.Payload)) // #nosec G115 -- a UnixNano this bench wrote itself
		return time.Duration(time.Now().UnixNano() - sent)
	})
	if err != nil {
		return "", err
	}
	defer func() { _ = stop() }() // a daemon that failed to start ran no job: the run fails on that
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
		if _, err := producer.Enqueue(ctx, worker.JobSpec{Queue: queue, Payload: p}); err != nil {
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
	defer func() { _ = stop() }() // a daemon that failed to start ran no job: the run fails on that
	first := time.Now().Add(o.delay).Truncate(time.Millisecond)
	specs := make([]worker.JobSpec, o.n)
	for i := range specs {
		specs[i] = worker.JobSpec{Queue: queue, Payload: b.payload(), RunAt: first.Add(time.Duration(i) * time.Millisecond)}
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
