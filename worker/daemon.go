package worker

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/store"
)

// Daemon runs the handlers of a Registry: it claims due jobs, runs them,
// renews their leases, records their outcomes, and recovers jobs whose
// worker died. Make one with NewDaemon and call Run once.
type Daemon struct {
	st      *store.Store
	cfg     Config
	reg     *Registry
	queues  []string
	running atomic.Bool // Run was called and has not returned
	working atomic.Bool // the pool is claiming jobs
	summary atomic.Pointer[DrainSummary]
}

// DrainSummary says how a stopped Daemon left its jobs.
type DrainSummary struct {
	Finished int // jobs that finished while draining
	Returned int // jobs cancelled at the shutdown timeout and put back due, attempt not spent
}

// NewDaemon returns a Daemon for the handlers in reg, on the Redis client
// rdb. It fails when reg is empty or cfg is invalid.
func NewDaemon(rdb rueidis.Client, reg *Registry, cfg Config) (*Daemon, error) {
	if rdb == nil {
		return nil, errors.New("worker: nil Redis client")
	}
	if reg == nil || len(reg.Queues()) == 0 {
		return nil, errors.New("worker: no handlers registered")
	}
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("worker config: %w", err)
	}
	return &Daemon{st: store.New(rdb, cfg.Prefix), cfg: cfg, reg: reg, queues: reg.Queues()}, nil
}

// Run works until ctx ends, then stops claiming, lets running jobs finish up
// to Config.ShutdownTimeout, cancels the rest (their context's cause is
// ErrShutdown) and puts them back due without spending an attempt, writes
// the last acks, and returns nil. Nothing claimed is lost: if the process
// dies instead, the jobs' leases expire and another process recovers them.
// Run returns an error only when it cannot start.
func (d *Daemon) Run(ctx context.Context) error {
	if !d.running.CompareAndSwap(false, true) {
		return errors.New("worker: Daemon.Run called twice")
	}
	defer d.running.Store(false)
	if err := d.st.AddQueues(ctx, d.queues...); err != nil {
		return err
	}
	queues := make([]pool.Queue, 0, len(d.queues))
	for _, name := range d.queues {
		reg, _ := d.reg.lookup(name)
		queues = append(queues, pool.Queue{
			Name:        name,
			Concurrency: reg.opts.Concurrency,
			MaxAttempts: reg.opts.MaxAttempts,
			RateLimit:   store.Rate{N: reg.opts.RateLimit.N, Per: reg.opts.RateLimit.Per},
			Exec:        executor(name, reg, d.cfg.Logger),
			Abort:       aborter(name, reg, d.cfg.Logger),
		})
	}
	p, err := pool.New(d.st, queues, pool.Config{
		Lease:           d.cfg.Lease,
		ShutdownTimeout: d.cfg.ShutdownTimeout,
		PollInterval:    d.cfg.PollInterval,
		RecoverInterval: d.cfg.RecoverInterval,
		Logger:          d.cfg.Logger,
	})
	if err != nil {
		return err
	}
	d.cfg.Logger.Info("worker pool started", "queues", d.queues, "lease", d.cfg.Lease)
	d.working.Store(true)
	defer d.working.Store(false)
	s, err := p.Run(ctx)
	if err != nil {
		return err
	}
	d.summary.Store(&DrainSummary{Finished: s.Finished, Returned: s.Returned})
	return nil
}

// Running reports whether Run has started the pool and is claiming jobs; it
// turns false when Run returns.
func (d *Daemon) Running() bool { return d.working.Load() }

// Drained returns what the last Run did while stopping, once it returned.
func (d *Daemon) Drained() (DrainSummary, bool) {
	s := d.summary.Load()
	if s == nil {
		return DrainSummary{}, false
	}
	return *s, true
}
