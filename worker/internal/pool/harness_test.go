package pool_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/internal/store/storetest"
)

// Every test runs inside a synctest bubble: the clock is fake, starts at
// midnight UTC 2000-01-01 and advances only when every goroutine of the
// bubble is blocked, so times below are exact.

var _ pool.Store = (*storetest.Fake)(nil)

// running is a pool started in the background.
type running struct {
	cancel context.CancelFunc
	done   chan struct{}
	sum    pool.Summary
	err    error
	ended  time.Time // when Run returned
}

// The causes the pool's jobs end with; the daemon passes worker.ErrShutdown,
// worker.ErrLeaseLost and worker.ErrCancelled.
var (
	errShutdown  = errors.New("test: shutting down")
	errLeaseLost = errors.New("test: lease lost")
	errCancelled = errors.New("test: cancelled")
)

// withDefaults fills the zero fields of cfg with the daemon's defaults
// (worker.Config's) and the test causes.
func withDefaults(cfg pool.Config) pool.Config {
	cfg.Lease = cmp.Or(cfg.Lease, worker.LeaseDefault)
	cfg.ShutdownTimeout = cmp.Or(cfg.ShutdownTimeout, worker.ShutdownTimeoutDefault)
	cfg.PollInterval = cmp.Or(cfg.PollInterval, worker.PollIntervalDefault)
	cfg.ShutdownCause = cmp.Or(cfg.ShutdownCause, errShutdown)
	cfg.LeaseLostCause = cmp.Or(cfg.LeaseLostCause, errLeaseLost)
	cfg.CancelledCause = cmp.Or(cfg.CancelledCause, errCancelled)
	return cfg
}

// startPool runs a pool of queues on st until stop is called; zero fields
// of cfg take the daemon's defaults.
func startPool(t *testing.T, st pool.Store, cfg pool.Config, queues ...pool.Queue) *running {
	t.Helper()
	p, err := pool.New(st, queues, withDefaults(cfg))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.sum, r.err = p.Run(ctx)
		r.ended = time.Now()
	}()
	return r
}

// stop cancels Run's context and waits for Run to return.
func (r *running) stop(t *testing.T) (pool.Summary, error) {
	t.Helper()
	r.cancel()
	return r.wait(t)
}

func (r *running) wait(t *testing.T) (pool.Summary, error) {
	t.Helper()
	<-r.done
	return r.sum, r.err
}

// start is one run of an exec.
type start struct {
	At    time.Time
	Rec   store.Record
	Cause error // context.Cause of the job's context once it ended; nil if it never ended while running
	EndAt time.Time
}

// execLog records the runs of jobs and how many ran at once.
type execLog struct {
	mu         sync.Mutex
	runs       map[string][]start
	running    int
	maxRunning int
}

func newExecLog() *execLog { return &execLog{runs: make(map[string][]start)} }

// wrap returns an Exec that records each run and then calls fn.
func (l *execLog) wrap(fn pool.Exec) pool.Exec {
	return func(ctx context.Context, rec *store.Record) pool.Outcome {
		l.mu.Lock()
		l.running++
		l.maxRunning = max(l.maxRunning, l.running)
		i := len(l.runs[rec.ID])
		l.runs[rec.ID] = append(l.runs[rec.ID], start{At: time.Now(), Rec: *rec})
		l.mu.Unlock()
		recorded := make(chan struct{})
		stopWatch := context.AfterFunc(ctx, func() {
			l.mu.Lock()
			l.runs[rec.ID][i].Cause = context.Cause(ctx)
			l.runs[rec.ID][i].EndAt = time.Now()
			l.mu.Unlock()
			close(recorded)
		})
		o := fn(ctx, rec)
		if !stopWatch() {
			<-recorded // the context ended: let its cause be recorded first
		}
		l.mu.Lock()
		l.running--
		l.mu.Unlock()
		return o
	}
}

func (l *execLog) get(id string) []start {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]start(nil), l.runs[id]...)
}

func (l *execLog) count() (jobs, runs, maxRunning int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range l.runs {
		runs += len(r)
	}
	return len(l.runs), runs, l.maxRunning
}

// ack is an Exec that succeeds at once.
func ack(context.Context, *store.Record) pool.Outcome { return pool.Outcome{Kind: pool.Ack} }

// sleepThenAck is an Exec that works for d, ignoring its context.
func sleepThenAck(d time.Duration) pool.Exec {
	return func(context.Context, *store.Record) pool.Outcome {
		time.Sleep(d)
		return pool.Outcome{Kind: pool.Ack}
	}
}

func jobID(i int) string { return fmt.Sprintf("job-%03d", i) }

// assertNoCalls fails when st recorded any call of the given methods.
func assertNoCalls(t *testing.T, st *storetest.Fake, methods ...string) {
	t.Helper()
	for _, m := range methods {
		if n := st.Count(m, ""); n != 0 {
			t.Errorf("%s called %d times, want 0: %+v", m, n, st.Calls(m))
		}
	}
}

// observed is what an observer heard about one job.
type observed struct {
	Queue   string
	Lag     time.Duration // -1 when Started was not called
	Res     metrics.Outcome
	Started bool
	Ran     time.Duration
}

// observer records the Started and Ended calls of a pool, in order of
// Ended; the pool calls Started before Ended on the same goroutine.
type observer struct {
	mu    sync.Mutex
	lags  []time.Duration // Started calls not yet ended, oldest first
	ended []observed
}

func (o *observer) Started(_ string, lag time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.lags = append(o.lags, lag)
}

func (o *observer) Ended(queue string, res metrics.Outcome, started bool, ran time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ob := observed{Queue: queue, Lag: -1, Res: res, Started: started, Ran: ran}
	if started && len(o.lags) > 0 {
		ob.Lag, o.lags = o.lags[0], o.lags[1:]
	}
	o.ended = append(o.ended, ob)
}

func (o *observer) get() []observed {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]observed(nil), o.ended...)
}

// sortedKeys returns the keys of m in order, for stable messages.
func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
