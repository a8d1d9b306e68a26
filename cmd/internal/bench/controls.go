package bench

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// The modes of the queue controls: how fast a pause stops a fleet, how
// fast a high-priority job starts behind a low-priority backlog, and how
// fast a cancel ends a running handler.

// pauseFleet is how many daemons the pause mode runs, each on its own Redis
// connections, as separate processes would.
const pauseFleet = 3

// pause runs pauseFleet daemons on a queue that always has jobs due
// (handlers take --work each), then --n times: pauses the queue (the call
// the API's pause route makes), notes when the last job of the fleet
// started, waits, and resumes. It reports the time from the pause call to
// the last job start after it (0 when none started after the call).
func (b *bench) pause(ctx context.Context) (string, error) {
	o := b.opts
	producer, op, err := b.clients()
	if err != nil {
		return "", err
	}
	var last atomic.Int64 // UnixNano of the latest handler start
	var started atomic.Int64
	h := worker.HandlerFunc(func(ctx context.Context, _ *worker.Job) error {
		last.Store(time.Now().UnixNano())
		started.Add(1)
		return waitOrDone(ctx, o.work)
	})
	// Enough work for the whole run: the fleet starts at most its
	// concurrency per --work, and runs about half of the time.
	perSec := float64(pauseFleet*o.concurrency) / max(o.work.Seconds(), 0.001)
	jobs := int(perSec*float64(o.n)*0.5) + 10*pauseFleet*o.concurrency
	if err := b.enqueueMany(ctx, producer, jobs, worker.PriorityNormal); err != nil {
		return "", err
	}
	for i := range pauseFleet {
		stop, err := b.startDaemonOn(ctx, i, h)
		if err != nil {
			return "", err
		}
		defer func() { _ = stop() }()
	}
	if !sleep(ctx, time.Second) {
		return "", ctx.Err()
	}
	var delays []time.Duration
	var before int64
	for range o.n {
		if n := started.Load(); n == before {
			return "", fmt.Errorf("no job started since the last resume: the queue ran dry or the daemons stopped")
		}
		t0 := time.Now()
		if err := op.Pause(ctx, queue); err != nil {
			return "", err
		}
		// A claim answered before the pause may start a job just after it;
		// none may start once the pause has reached every process.
		if !sleep(ctx, 300*time.Millisecond) {
			return "", ctx.Err()
		}
		d := max(time.Duration(last.Load()-t0.UnixNano()), 0)
		delays = append(delays, d)
		before = started.Load()
		if err := op.Resume(ctx, queue); err != nil {
			return "", err
		}
		if !sleep(ctx, 200*time.Millisecond) {
			return "", ctx.Err()
		}
	}
	slices.Sort(delays)
	return fmt.Sprintf("mode=pause daemons=%d concurrency=%d work=%s pauses=%d started=%d pause_to_last_start_p50_ms=%s p99_ms=%s max_ms=%s",
		pauseFleet, o.concurrency, o.work, o.n, started.Load(), ms(percentile(delays, 50)), ms(percentile(delays, 99)), ms(delays[len(delays)-1])), nil
}

// priority enqueues --backlog low-priority jobs due now, starts the pool on
// them, then sends a high-priority job every --every and measures from its
// enqueue to its handler's start, while the pool works through the
// backlog.
func (b *bench) priority(ctx context.Context) (string, error) {
	o := b.opts
	producer, op, err := b.clients()
	if err != nil {
		return "", err
	}
	if err := b.enqueueMany(ctx, producer, o.backlog, worker.PriorityLow); err != nil {
		return "", fmt.Errorf("enqueue the backlog: %w", err)
	}
	rec := newLagRecorder(o.n)
	var low atomic.Int64
	stop, err := b.startDaemon(ctx, worker.HandlerFunc(func(ctx context.Context, j *worker.Job) error {
		if j.Priority != worker.PriorityHigh {
			low.Add(1)
			return waitOrDone(ctx, o.work)
		}
		sent := int64(binary.BigEndian.Uint64(j.Payload)) // #nosec G115 -- a UnixNano this bench wrote itself
		rec.add(time.Duration(time.Now().UnixNano() - sent))
		return nil
	}))
	if err != nil {
		return "", err
	}
	defer func() { _ = stop() }()
	if !sleep(ctx, 500*time.Millisecond) {
		return "", ctx.Err()
	}
	tick := time.NewTicker(o.every)
	defer tick.Stop()
	p := make([]byte, 8)
	for range o.n {
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-tick.C:
		}
		binary.BigEndian.PutUint64(p, uint64(time.Now().UnixNano()))
		if _, err := producer.Enqueue(ctx, worker.JobSpec{Queue: queue, Payload: slices.Clone(p), Priority: worker.PriorityHigh}); err != nil {
			return "", err
		}
	}
	lowAtEnd := low.Load()
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	lags := rec.wait(waitCtx)
	if len(lags) < o.n {
		return "", fmt.Errorf("%w: %d of %d", errIncomplete, len(lags), o.n)
	}
	s, err := op.Stats(ctx, queue)
	if err != nil {
		return "", err
	}
	if int(lowAtEnd) >= o.backlog {
		return "", fmt.Errorf("the backlog ran out before the last high-priority job: raise --backlog or --work")
	}
	return fmt.Sprintf("mode=priority backlog=%d low_ran=%d low_left=%d n=%d every=%s high_start_p50_ms=%s high_start_p99_ms=%s high_start_max_ms=%s",
		o.backlog, lowAtEnd, s.Ready, o.n, o.every, ms(percentile(lags, 50)), ms(percentile(lags, 99)), ms(lags[len(lags)-1])), nil
}

// cancelRunning starts --n jobs one at a time; once each has started, it
// cancels it and measures from the Cancel call to the handler's context
// ending.
func (b *bench) cancelRunning(ctx context.Context) (string, error) {
	o := b.opts
	producer, op, err := b.clients()
	if err != nil {
		return "", err
	}
	startedCh := make(chan string, 1)
	ended := make(chan time.Time, 1)
	stop, err := b.startDaemon(ctx, worker.HandlerFunc(func(ctx context.Context, j *worker.Job) error {
		startedCh <- j.ID
		<-ctx.Done()
		ended <- time.Now()
		return nil
	}))
	if err != nil {
		return "", err
	}
	defer func() { _ = stop() }()
	// Let the daemon subscribe first: a cancel published before would
	// reach it at its first extension round instead (see pool's
	// subscribeLoop).
	if !sleep(ctx, 500*time.Millisecond) {
		return "", ctx.Err()
	}
	var delays []time.Duration
	for range o.n {
		if _, err := producer.Enqueue(ctx, worker.JobSpec{Queue: queue, Payload: b.payload()}); err != nil {
			return "", err
		}
		var id string
		select {
		case id = <-startedCh:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		t0 := time.Now()
		if err := op.Cancel(ctx, queue, id); err != nil {
			return "", err
		}
		select {
		case at := <-ended:
			delays = append(delays, at.Sub(t0))
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	slices.Sort(delays)
	return fmt.Sprintf("mode=cancel n=%d cancel_to_ctx_done_p50_ms=%s p99_ms=%s max_ms=%s",
		o.n, ms(percentile(delays, 50)), ms(percentile(delays, 99)), ms(delays[len(delays)-1])), nil
}

// clients returns an application's client (enqueues) and an operator's
// (pause, cancel, stats), both on the counted connection.
func (b *bench) clients() (*worker.Client, *admin.Client, error) {
	producer, err := worker.NewClient(b.counted, b.config())
	if err != nil {
		return nil, nil, err
	}
	op, err := admin.NewClient(b.counted, b.config())
	if err != nil {
		return nil, nil, err
	}
	return producer, op, nil
}

// enqueueMany enqueues n jobs due now at priority p, in batches.
func (b *bench) enqueueMany(ctx context.Context, c *worker.Client, n int, p worker.Priority) error {
	const chunk = 10000
	payload := b.payload()
	specs := make([]worker.JobSpec, 0, chunk)
	for done := 0; done < n; done += len(specs) {
		specs = specs[:0]
		for range min(chunk, n-done) {
			specs = append(specs, worker.JobSpec{Queue: queue, Payload: payload, Priority: p})
		}
		if _, err := c.EnqueueMany(ctx, specs); err != nil {
			return err
		}
	}
	return nil
}

// startDaemonOn is startDaemon for the i-th daemon of a fleet: each but the
// first gets its own Redis connections and no metrics, as another process
// would.
func (b *bench) startDaemonOn(ctx context.Context, i int, h worker.Handler) (stop func() error, err error) {
	reg := worker.NewRegistry()
	if err := reg.Register(queue, h, b.queueOptions()); err != nil {
		return nil, err
	}
	d, err := b.runDaemon(ctx, i, reg)
	if err != nil {
		return nil, err
	}
	return d.stop, nil
}

// benchDaemon is a daemon a run started.
type benchDaemon struct {
	*worker.Daemon
	// stop stops it and waits for it to drain; it may be called again (a
	// deferred call after the checked one).
	stop func() error
	done chan struct{} // closed when Run has returned
}

// runDaemon runs the i-th daemon of a fleet on reg until its stop function
// is called. The first daemon runs on the counted connection with the
// run's metrics; each other gets its own Redis connections and no metrics,
// as another process would.
func (b *bench) runDaemon(ctx context.Context, i int, reg *worker.Registry) (*benchDaemon, error) {
	rdb := rueidis.Client(b.counted)
	cfg := b.config()
	if i > 0 {
		var err error
		if rdb, err = rueidis.NewClient(rueidis.ClientOption{InitAddress: b.opts.redisAddrs(), DisableCache: true}); err != nil {
			return nil, fmt.Errorf("connect daemon %d to Redis: %w", i+1, err)
		}
		cfg.Registerer = nil
	}
	d, err := worker.NewDaemon(rdb, reg, cfg)
	if err != nil {
		if i > 0 {
			rdb.Close()
		}
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	var runErr error
	done := make(chan struct{})
	go func() {
		runErr = d.Run(runCtx)
		close(done)
	}()
	return &benchDaemon{Daemon: d, done: done, stop: sync.OnceValue(func() error {
		cancel()
		<-done
		if i > 0 {
			rdb.Close()
		}
		return runErr
	})}, nil
}

// waitOrDone waits d, or until ctx ends.
func waitOrDone(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
