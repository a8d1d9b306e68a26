package carrier

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/worker/internal/store"
	"github.com/seed-53d105c9/courier/worker/lock"
)

// Store is the part of store.Store the duties use.
type Store interface {
	Keys(queue string) store.Keys
	Recover(ctx context.Context, queue, leader string, limit, defaultMax int) (store.Recovered, error)
	TrimDead(ctx context.Context, queue, leader string, maxJobs int, maxAge time.Duration, limit int) (store.Trimmed, error)
	Fire(ctx context.Context, queue, leader string, f store.Fire) (store.FireResult, error)
	LastFire(ctx context.Context, queue, schedule string) (time.Time, bool, error)
	Stats(ctx context.Context, queue string) (store.Stats, error)
}

var _ Store = (*store.Store)(nil)

// Locker is the part of lock.Client the electors use.
type Locker interface {
	Acquire(ctx context.Context, name, holder string, o lock.AcquireOptions) (*lock.Held, error)
}

// Queue is a queue whose carrier duties this process may take on.
type Queue struct {
	Name string
	// MaxAttempts is the queue's default, for recovered jobs enqueued
	// without their own.
	MaxAttempts int
	Periodic    []Periodic
}

// Config tunes the duties; Run fills zero fields with the defaults.
type Config struct {
	RecoverInterval time.Duration // default 1s
	TrimInterval    time.Duration // default 1m
	DeadMaxJobs     int           // default 10,000; kept per queue
	DeadMaxAge      time.Duration // default 30 days
	SampleInterval  time.Duration // default 5s
	Logger          *slog.Logger
	// OnLeader is told when this process gains (true) or loses (false) the
	// lead of a queue.
	OnLeader func(queue string, leading bool)
	// OnSample receives the sizes of a queue this process leads.
	OnSample func(queue string, s store.Stats)
	// OnFire is told of each periodic job this process enqueued.
	OnFire func(queue string)
}

// Defaults of Config.
const (
	RecoverIntervalDefault = time.Second
	TrimIntervalDefault    = time.Minute
	DeadMaxJobsDefault     = 10000
	DeadMaxAgeDefault      = 30 * 24 * time.Hour
	SampleIntervalDefault  = 5 * time.Second

	// holder is the second half of the leader lock's field; the first is the
	// process's lock client id.
	holder = "leader"
	// batchLimit is how many jobs one duty call handles; drainCalls is how
	// many calls one tick may make while a backlog lasts.
	batchLimit = store.MaxBatch
	drainCalls = 10
	// retryWait is the pause after a failed acquire (Redis unreachable).
	retryWait = time.Second
	// releaseTimeout bounds the release of leadership at shutdown.
	releaseTimeout = 2 * time.Second
)

// ErrNotLeader ends a leadership term when a fenced call found that this
// process no longer holds the queue's leader lock.
var ErrNotLeader = store.ErrNotLeader

// Carrier elects this process leader of queues and runs their duties.
type Carrier struct {
	st     Store
	locks  Locker
	field  func(holder string) string
	queues []Queue
	cfg    Config

	mu      sync.Mutex
	leading map[string]bool
}

// New returns a Carrier for queues. field maps the lock holder to the lock
// field fenced scripts check (lock.Client.Field).
func New(st Store, locks Locker, field func(holder string) string, queues []Queue, cfg Config) *Carrier {
	if cfg.RecoverInterval <= 0 {
		cfg.RecoverInterval = RecoverIntervalDefault
	}
	if cfg.TrimInterval <= 0 {
		cfg.TrimInterval = TrimIntervalDefault
	}
	if cfg.DeadMaxJobs <= 0 {
		cfg.DeadMaxJobs = DeadMaxJobsDefault
	}
	if cfg.DeadMaxAge <= 0 {
		cfg.DeadMaxAge = DeadMaxAgeDefault
	}
	if cfg.SampleInterval <= 0 {
		cfg.SampleInterval = SampleIntervalDefault
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Carrier{st: st, locks: locks, field: field, queues: queues, cfg: cfg, leading: map[string]bool{}}
}

// Run elects for every queue until ctx ends, then stops the duties, releases
// the leadership it holds (so that a follower takes over at once) and
// returns nil.
func (c *Carrier) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	for _, q := range c.queues {
		wg.Go(func() { c.elect(ctx, q) })
	}
	wg.Wait()
	return nil
}

// Leading reports whether this process leads queue.
func (c *Carrier) Leading(queue string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leading[queue]
}

func (c *Carrier) setLeading(queue string, on bool) {
	c.mu.Lock()
	c.leading[queue] = on
	c.mu.Unlock()
	if c.cfg.OnLeader != nil {
		c.cfg.OnLeader(queue, on)
	}
}
