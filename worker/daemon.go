package worker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
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
// worker died. Make one with NewDaemon, then call Run, or Start and Stop.
type Daemon struct {
	rdb     rueidis.Client
	metrics *metrics.Set // nil without a Registerer
	id      string       // see ID
	st      *store.Store
	layer   *queue.Layer // the queues' records: layouts, settings, pause
	carrier atomic.Pointer[carrier.Carrier]
	cfg     Config
	regs    map[string]registration // the Registry's, handlers wrapped in its middleware
	queues  []string
	life    lifecycle   // Run, Start and Stop (lifecycle.go)
	start   startWait   // the wait for Redis before the pool starts (Waiting)
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
// rdb, wrapped in reg's middleware (Registry.Use); queues registered
// later are not served. It fails when reg is empty or cfg is invalid.
func NewDaemon(rdb rueidis.Client, reg *Registry, cfg Config) (*Daemon, error) {
	if rdb == nil {
		return nil, errors.New("worker: nil Redis client")
	}
	if reg == nil || len(reg.Queues()) == 0 {
		return nil, errors.New("worker: no handlers registered")
	}
	regs, err := reg.wrapped()
	if err != nil {
		return nil, err
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
	d := &Daemon{rdb: rdb, metrics: m, id: newProcessID(), st: cc.St, layer: cc.Layer, cfg: cfg,
		regs: regs, queues: slices.Sorted(maps.Keys(regs)), env: env}
	d.start.log, d.start.notify = cfg.Logger, d.life.waiting
	return d, nil
}

// ID names this Daemon in its queues' fleets (admin.Client.Fleet) and is the
// client id of its leader locks: "<host>-<pid>-<random>".
func (d *Daemon) ID() string { return d.id }

// Ping checks that Redis answers, through the Daemon's client (so a
// failure shows in courier_redis_errors_total{op="ping"}).
func (d *Daemon) Ping(ctx context.Context) error {
	return d.st.Ping(ctx)
}

// run is Run's work, for Run and Start: it works until ctx ends, then
// drains, hard-stopping at once when hurry closes (Stop's context ended).
// It calls up once the pool runs.
func (d *Daemon) run(ctx context.Context, hurry <-chan struct{}, up func()) error {
	// The start-up writes wait while Redis is unavailable (startup.go).
	if _, err := retryStart(ctx, &d.start, "record queue names", func(ctx context.Context) (any, error) {
		return nil, d.st.AddQueues(ctx, d.queues...)
	}); err != nil {
		return err
	}
	m := d.metrics
	queues := make([]pool.Queue, 0, len(d.queues))
	duties := make([]carrier.Queue, 0, len(d.queues))
	for _, name := range d.queues {
		reg := d.regs[name]
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
				KeyCap:      reg.opts.KeyConcurrency,
				KeyRate:     store.Rate{N: reg.opts.KeyRateLimit.N, Per: reg.opts.KeyRateLimit.Per},
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
		HardStop:        hurry,
	}
	if m != nil {
		pcfg.Observer = m
	}
	p, err := pool.New(d.st, queues, pcfg)
	if err != nil {
		return err
	}
	for _, name := range d.queues {
		reg := d.regs[name]
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
			m.QueueKeyCount(queue, s.Keys)
		},
		OnKeys: func(queue string, top []store.KeyInfo) {
			keys := make([]metrics.KeySample, len(top))
			now := time.Now().UnixMilli()
			for i, k := range top {
				keys[i] = metrics.KeySample{Key: k.Key, Ready: k.Ready, Scheduled: max(k.Waiting-k.Ready, 0), Running: k.Running,
					AtCap: k.Parked, Limited: k.LimitedUntil > now}
			}
			m.QueueKeys(queue, keys)
		},
		TopKeys: metricsTopKeys,
		OnFire:  func(queue string) { m.Enqueued(queue, 1) },
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
	up()
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
		reg := d.regs[q]
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

// metricsTopKeys is how many job keys of a queue its leader reports by
// name (courier_key_jobs): those with the most waiting jobs.
const metricsTopKeys = 10
