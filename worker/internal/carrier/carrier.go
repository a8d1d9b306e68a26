package carrier

import (
	"cmp"
	"context"
	"fmt"
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
	TrimCompleted(ctx context.Context, queue, leader string, maxJobs int, maxAge time.Duration, limit int) (store.Trimmed, error)
	TrimCancelled(ctx context.Context, queue, leader string, maxJobs int, maxAge time.Duration, limit int) (store.Trimmed, error)
	ExpireUnique(ctx context.Context, queue, leader string, limit int) (store.ExpiredUnique, error)
	TrimHistory(ctx context.Context, queue, leader string, retention time.Duration) (int, error)
	Fire(ctx context.Context, queue, leader string, f store.Fire) (store.FireResult, error)
	LastFire(ctx context.Context, queue, schedule string) (time.Time, bool, error)
	ForgetSchedules(ctx context.Context, queue string, keep []string, before time.Time) ([]string, error)
	ForgetQueues(ctx context.Context, keep []string) ([]string, error)
	Stats(ctx context.Context, queue string) (store.Stats, error)
	StatsOf(ctx context.Context, queues []string) ([]store.Stats, error)
	TopKeys(ctx context.Context, partitions []string, n int) ([]store.KeyInfo, int64, error)
}

var _ Store = (*store.Store)(nil)

// Locker is the part of lock.Client the electors use.
type Locker interface {
	Acquire(ctx context.Context, name, holder string, o lock.AcquireOptions) (*lock.Held, error)
}

// Queue is a queue whose carrier duties this process may take on.
type Queue struct {
	Name string
	// Group is the queue this is a partition of ("" for a queue of one):
	// each partition is led on its own, and a process that leads more of
	// a Group's partitions than its share of the fleet hands some over
	// (spread.go). Only partition 0 (Name == Group) is reported to
	// OnLeader and OnSample, under the Group's name.
	Group string
	// Sum names the other partitions of the Group, whose sizes partition
	// 0's leader adds to its sample.
	Sum []string
	// DeadMaxJobs bounds this partition's dead set; 0 = Config.DeadMaxJobs.
	DeadMaxJobs int
	// CompletedMaxJobs and CompletedMaxAge bound this partition's
	// completed set (the finished jobs the queue retains, its share of
	// the queue's count); CompletedMaxJobs 0 means the queue retains none,
	// and CompletedMaxAge 0 no age bound (see completedLoop).
	CompletedMaxJobs int
	CompletedMaxAge  time.Duration
	// MaxAttempts is the queue's default, for recovered jobs enqueued
	// without their own.
	MaxAttempts int
	Periodic    []Periodic
}

// Config tunes the duties. RecoverInterval, DeadMaxJobs, DeadMaxAge and
// HistoryRetention are required: their defaults are the public package's
// (worker.Config).
type Config struct {
	RecoverInterval time.Duration
	// RenewGrace is how long the holders of jobs may need to renew their
	// leases once Redis answers them again: the leader recovers expired
	// leases only after it has reached Redis for that long (see
	// recoverLoop). The daemon passes its pool's renewal interval plus a
	// margin; 0 recovers at once.
	RenewGrace  time.Duration
	DeadMaxJobs int // kept per queue
	DeadMaxAge  time.Duration
	// HistoryRetention is how long the leader keeps the minutes of a
	// queue's history (store.Keys.History); it deletes older ones with the
	// dead set's trim.
	HistoryRetention time.Duration
	TrimInterval     time.Duration // 0 means 1m
	// CompletedTrimInterval is how often the leader of a queue that
	// retains completed jobs trims them; 0 means 1s.
	CompletedTrimInterval time.Duration
	SampleInterval        time.Duration // 0 means 5s
	// ForgetQueuesInterval is how often the leader of this process's first
	// queue (by name) forgets the queues no longer in use; 0 means 1h.
	ForgetQueuesInterval time.Duration
	Logger               *slog.Logger // nil discards
	// OnLeader is told when this process gains (true) or loses (false) the
	// lead of a queue.
	OnLeader func(queue string, leading bool)
	// OnSample receives the sizes and the pause flag of a queue this
	// process leads.
	OnSample func(queue string, s store.Stats)
	// OnKeys receives, after a sample of a queue that has job keys (or had
	// them at the sample before), its TopKeys keys with the most waiting
	// jobs, across its partitions, most first.
	OnKeys func(queue string, top []store.KeyInfo)
	// TopKeys is how many keys of a queue OnKeys receives.
	TopKeys int
	// OnFire is told of each periodic job this process enqueued.
	OnFire func(queue string)
	// FleetSize returns how many processes serve a queue (by its name, a
	// Group's for a partition), for the spread of the leaderships of its
	// partitions; nil counts one.
	FleetSize func(ctx context.Context, queue string) (int, error)
}

const (
	// trimInterval, completedTrimInterval and sampleInterval are the
	// defaults of Config's: how often a leader trims the dead set and the
	// completed set, and samples the queue's sizes.
	trimInterval          = time.Minute
	completedTrimInterval = time.Second
	sampleInterval        = 5 * time.Second

	// holder is the second half of the leader lock's field; the first is the
	// process's lock client id.
	holder = "leader"
	// batchLimit is how many jobs one duty call handles (a tick calls on
	// while a backlog lasts: sweep).
	batchLimit = store.MaxBatch
	// scheduleRetention is how long the last fire of a schedule removed from
	// the configuration is kept (a schedule added back within it catches up
	// on its missed fires); forgetInterval is how often a leader looks.
	scheduleRetention = 7 * 24 * time.Hour
	forgetInterval    = time.Hour
	// forgetQueuesInterval is Config.ForgetQueuesInterval's default.
	forgetQueuesInterval = time.Hour
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
	first  string // the queue, by name, whose leader forgets unused queues
	cfg    Config

	mu         sync.Mutex
	leading    map[string]bool
	handedOver map[string]bool // partitions handed over, to wait before standing again
}

// New returns a Carrier for queues. field maps the lock holder to the lock
// field fenced scripts check (lock.Client.Field).
func New(st Store, locks Locker, field func(holder string) string, queues []Queue, cfg Config) (*Carrier, error) {
	switch {
	case cfg.RecoverInterval <= 0:
		return nil, fmt.Errorf("carrier: Config.RecoverInterval %v: must be positive", cfg.RecoverInterval)
	case cfg.DeadMaxJobs <= 0:
		return nil, fmt.Errorf("carrier: Config.DeadMaxJobs %d: must be positive", cfg.DeadMaxJobs)
	case cfg.DeadMaxAge <= 0:
		return nil, fmt.Errorf("carrier: Config.DeadMaxAge %v: must be positive", cfg.DeadMaxAge)
	case cfg.HistoryRetention <= 0:
		return nil, fmt.Errorf("carrier: Config.HistoryRetention %v: must be positive", cfg.HistoryRetention)
	case cfg.RenewGrace < 0:
		return nil, fmt.Errorf("carrier: Config.RenewGrace %v: must not be negative", cfg.RenewGrace)
	}
	cfg.TrimInterval = cmp.Or(cfg.TrimInterval, trimInterval)
	cfg.CompletedTrimInterval = cmp.Or(cfg.CompletedTrimInterval, completedTrimInterval)
	cfg.SampleInterval = cmp.Or(cfg.SampleInterval, sampleInterval)
	cfg.ForgetQueuesInterval = cmp.Or(cfg.ForgetQueuesInterval, forgetQueuesInterval)
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	first := ""
	for _, q := range queues {
		if q.partition() {
			continue
		}
		if first == "" || q.Name < first {
			first = q.Name
		}
	}
	return &Carrier{st: st, locks: locks, field: field, queues: queues, first: first, cfg: cfg, leading: map[string]bool{}, handedOver: map[string]bool{}}, nil
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

func (c *Carrier) setLeading(q Queue, on bool) {
	c.mu.Lock()
	c.leading[q.Name] = on
	c.mu.Unlock()
	if c.cfg.OnLeader != nil && !q.partition() {
		c.cfg.OnLeader(q.label(), on)
	}
}

// partition reports whether q is a partition i ≥ 1 of its Group.
func (q Queue) partition() bool { return q.Group != "" && q.Name != q.Group }

// label names q in metrics: its Group's name, for a partition.
func (q Queue) label() string { return cmp.Or(q.Group, q.Name) }
