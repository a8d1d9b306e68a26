package worker

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/carrier"
	"github.com/seed-53d105c9/courier/worker/internal/core"
	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/pool"
	"github.com/seed-53d105c9/courier/worker/internal/queue"
	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// Daemon runs the handlers of a Registry: it claims due jobs, runs them,
// renews their leases, records their outcomes, and recovers jobs whose
// worker died. Make one with NewDaemon and call Run once.
type Daemon struct {
	rdb     rueidis.Client
	metrics *metrics.Set // nil without a Registerer
	id      string       // see ID
	st      *store.Store
	layer   *queue.Layer // the queues' records: layouts, settings, pause
	carrier atomic.Pointer[carrier.Carrier]
	cfg     Config
	reg     *Registry
	queues  []string
	running atomic.Bool // Run was called and has not returned
	start   startWait   // Run's wait for Redis before its pool starts (Waiting)
	working atomic.Bool // the pool is claiming jobs
	summary atomic.Pointer[DrainSummary]
	env     execEnv // what the queues' executors share
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
	m, err := metrics.New(cfg.Registerer)
	if err != nil {
		return nil, fmt.Errorf("worker metrics: %w", err)
	}
	env := execEnv{log: cfg.Logger, maxResult: cfg.MaxResultBytes, tracer: newTracer(cfg.TracerProvider)}
	cc := core.New(rdb, cfg.Prefix, m)
	return &Daemon{rdb: rdb, metrics: m, id: newProcessID(), st: cc.St, layer: cc.Layer, cfg: cfg, reg: reg, queues: reg.Queues(), env: env}, nil
}

// ID names this Daemon in its queues' fleets (admin.Client.Fleet) and is the
// client id of its leader locks: "<host>-<pid>-<random>".
func (d *Daemon) ID() string { return d.id }

// Ping checks that Redis answers, through the Daemon's client (so a
// failure shows in courier_redis_errors_total{op="ping"}).
func (d *Daemon) Ping(ctx context.Context) error {
	return d.st.Ping(ctx)
}

// Run works until ctx ends, then stops claiming, lets running jobs finish up
// to Config.ShutdownTimeout, cancels the rest (their context's cause is
// ErrShutdown) and puts them back due without spending an attempt, writes
// the last acks, and returns nil. Nothing claimed is lost: if the process
// dies instead, the jobs' leases expire and the queue's leader recovers
// them.
//
// Before its pool starts, Run waits while Redis is unavailable, as Dial
// does, logging the wait every 5 s (Waiting says why). It returns an error
// only when it cannot start: an error waiting cannot fix, or ctx ended.
//
// Alongside the pool, Run stands for the leadership of each of its queues
// (package worker/lock) and, while it leads one, recovers expired leases,
// trims the dead set, samples the queue's sizes and fires its periodic
// jobs. When ctx ends it releases its leaderships at once, so that another
// process takes over within milliseconds, while the pool drains.
func (d *Daemon) Run(ctx context.Context) error {
	if !d.running.CompareAndSwap(false, true) {
		return errors.New("worker: Daemon.Run called twice")
	}
	defer d.running.Store(false)
	// The start-up writes wait while Redis is unavailable (startup.go).
	d.start.log = d.cfg.Logger
	if _, err := retryStart(ctx, &d.start, "record queue names", func(ctx context.Context) (any, error) {
		return nil, d.st.AddQueues(ctx, d.queues...)
	}); err != nil {
		return err
	}
	m := d.metrics
	queues := make([]pool.Queue, 0, len(d.queues))
	duties := make([]carrier.Queue, 0, len(d.queues))
	for _, name := range d.queues {
		reg, _ := d.reg.lookup(name)
		parts, err := retryStart(ctx, &d.start, "partitions of queue "+name, func(ctx context.Context) ([]string, error) {
			return d.servePartitions(ctx, name, reg.opts.Partitions)
		})
		if err != nil {
			return fmt.Errorf("worker: partitions of queue %q: %w", name, err)
		}
		group := ""
		if len(parts) > 1 {
			group = name
		}
		exec, abort := executor(name, reg, d.env), aborter(name, reg, d.cfg.Logger)
		var byKind pool.KindObserver // nil unless the queue serves several kinds, and metrics are on
		if kinds := servedKinds(reg.handler); kinds != nil && m != nil {
			byKind = kindMetrics{m.Kinds(name, kinds)}
		}
		for i, part := range parts {
			share := completedShare(reg.opts, i) // completed jobs this partition retains
			queues = append(queues, pool.Queue{
				Name:        part,
				Group:       group,
				Concurrency: reg.opts.Concurrency,
				MaxAttempts: reg.opts.MaxAttempts,
				RateLimit:   store.Rate{N: reg.opts.RateLimit.N, Per: reg.opts.RateLimit.Per}, // each partition claims its share (queue.Layer)
				Weights:     store.Weights{High: reg.opts.PriorityWeights.High, Normal: reg.opts.PriorityWeights.Normal, Low: reg.opts.PriorityWeights.Low},
				Exec:        exec,
				Abort:       abort,
				Retain:      share > 0,
				Kinds:       byKind,
			})
			duty := carrier.Queue{Name: part, Group: group, MaxAttempts: reg.opts.MaxAttempts,
				DeadMaxJobs:      (d.cfg.DeadMaxJobs + len(parts) - 1) / len(parts),
				CompletedMaxJobs: share, CompletedMaxAge: reg.opts.RetainCompleted.Age}
			if i == 0 {
				duty.Periodic, duty.Sum = periodics(reg.opts.Periodic), parts[1:]
			}
			duties = append(duties, duty)
		}
	}
	pcfg := pool.Config{
		Lease:           d.cfg.Lease,
		ShutdownTimeout: d.cfg.ShutdownTimeout,
		PollInterval:    d.cfg.PollInterval,
		ShutdownCause:   ErrShutdown,
		LeaseLostCause:  ErrLeaseLost,
		CancelledCause:  ErrCancelled,
		Logger:          d.cfg.Logger,
		Process:         d.id,
	}
	if m != nil {
		pcfg.Observer = m
	}
	p, err := pool.New(d.st, queues, pcfg)
	if err != nil {
		return err
	}
	for _, name := range d.queues {
		reg, _ := d.reg.lookup(name)
		m.Serve(name, reg.opts.Concurrency)
	}
	defer m.Stop(d.queues)
	locks, err := lock.NewClient(d.rdb, lock.Options{
		ID: d.id, Lease: d.cfg.LeaderLease, Logger: d.cfg.Logger,
		Registerer: d.cfg.Registerer, MetricLabel: d.lockLabels(),
	})
	if err != nil {
		return fmt.Errorf("worker: leader locks: %w", err)
	}
	defer locks.Close() // after the carrier released its leaderships
	c, err := carrier.New(d.st, locks, locks.Field, duties, carrier.Config{
		RecoverInterval:  d.cfg.RecoverInterval,
		RenewGrace:       pool.RenewRound(d.cfg.Lease),
		DeadMaxJobs:      d.cfg.DeadMaxJobs,
		DeadMaxAge:       d.cfg.DeadMaxAge,
		HistoryRetention: d.cfg.HistoryRetention,
		Logger:           d.cfg.Logger,
		OnLeader:         m.Leader,
		OnSample: func(queue string, s store.Stats) {
			m.QueueJobs(queue, metrics.QueueSizes{
				Scheduled: s.Scheduled, Ready: s.Ready, Active: s.Active, Dead: s.Dead, Completed: s.Completed,
				ReadyHigh: s.ReadyHigh, ReadyLow: s.ReadyLow,
			})
			m.QueuePaused(queue, s.Paused)
		},
		OnFire: func(queue string) { m.Enqueued(queue, 1) },
		FleetSize: func(ctx context.Context, queue string) (int, error) {
			f, err := d.st.FleetInfo(ctx, queue)
			return len(f.Members), err
		},
	})
	if err != nil {
		return err
	}
	d.carrier.Store(c)

	d.cfg.Logger.Info("worker pool started", "queues", d.queues, "lease", d.cfg.Lease, "leader_lease", d.cfg.LeaderLease)
	d.working.Store(true)
	defer d.working.Store(false)
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.Run(ctx) })
	wg.Go(func() { d.reportLoop(ctx) })
	wg.Go(func() { d.prefixLoop(ctx) }) // PrefixesKey, for Client.CheckPrefix
	s, err := p.Run(ctx)
	wg.Wait()
	if err != nil {
		return err
	}
	d.summary.Store(&DrainSummary{Finished: s.Finished, Returned: s.Returned})
	return nil
}

// lockLabels maps each leader lock's name to its metric label, the queue's:
// it keeps the label's values bounded and readable.
func (d *Daemon) lockLabels() func(name string) string {
	labels := make(map[string]string, len(d.queues))
	for _, q := range d.queues {
		reg, _ := d.reg.lookup(q)
		for i, p := range store.PartitionNames(q, reg.opts.Partitions) {
			label := metrics.LockLabel(q) // partition i ≥ 1: "<queue>#<i>:leader"
			if i > 0 {
				label = metrics.LockLabel(q + "#" + strconv.Itoa(i))
			}
			labels[d.st.Keys(p).Leader] = label
		}
	}
	return func(name string) string {
		if l, ok := labels[name]; ok {
			return l
		}
		return name
	}
}

// Leading reports whether this Daemon leads queue: it holds the queue's
// leader lock and does the queue's carrier duties.
func (d *Daemon) Leading(queue string) bool {
	c := d.carrier.Load()
	return c != nil && d.working.Load() && c.Leading(queue)
}

// kindMetrics records the attempts of a queue of several kinds by kind.
type kindMetrics struct{ m *metrics.Kinds }

func (k kindMetrics) Ended(rec *store.Record, o metrics.Outcome, started bool, ran time.Duration) {
	k.m.Ended(rec.Headers[core.KindHeader], o, started, ran)
}

func periodics(ps []Periodic) []carrier.Periodic {
	out := make([]carrier.Periodic, 0, len(ps))
	for _, p := range ps {
		sched, _ := p.schedule() // validated by Register
		out = append(out, carrier.Periodic{
			Name: p.Name, Schedule: sched, Payload: p.Payload,
			MaxAttempts: p.MaxAttempts, Timeout: p.Timeout, SkipMissed: p.SkipMissed,
			Headers: core.WithKind(nil, p.Kind),
		})
	}
	return out
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
