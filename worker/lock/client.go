package lock

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/wakeup"
)

// Defaults and bounds of Options.
const (
	// LeaseDefault is the watchdog lease: Redisson's lockWatchdogTimeout.
	LeaseDefault = 30 * time.Second
	// LeaseMin is the shortest watchdog lease accepted (renewals every
	// 10ms).
	LeaseMin = 30 * time.Millisecond
	// MarginMin is the smallest safety margin between the local deadline
	// of a hold and the expiry of its key in Redis; see Margin.
	MarginMin = 50 * time.Millisecond
)

// Options configures a Client. The zero value is usable.
type Options struct {
	// ID is this process's client id, the first half of every field it
	// writes ("<ID>:<holder>"). It must be unique among all processes
	// sharing the Redis (Redisson uses a UUID per client) and may not
	// contain ':'. Default: a random UUID version 4.
	ID string

	// Lease is the lease of a lock held in watchdog mode: the watchdog
	// renews it every Lease/3, and the hold ends (ErrLockExpired) when no
	// renewal was confirmed for Lease minus Margin(Lease). Whole
	// milliseconds; at least LeaseMin. Default: LeaseDefault (30s).
	Lease time.Duration

	// Registerer, when not nil, receives the lock metrics
	// (courier_lock_acquire_seconds, courier_lock_contention_total,
	// courier_lock_renewals_total, labelled by lock; see MetricLabel) and
	// the Redis metrics of the lock scripts (courier_redis_script_seconds,
	// courier_redis_errors_total). Clients, Daemons and worker Clients on
	// one Registerer share the series. Default: nil (no metrics).
	Registerer prometheus.Registerer

	// MetricLabel maps a lock name to the value of the metrics' "lock"
	// label. Set it when lock names are unbounded (one per user, per job),
	// for example to return a fixed "job" or the name's family.
	// Default: the name itself.
	MetricLabel func(name string) string

	// Logger receives warnings about renewals and subscriptions (nothing
	// that is also returned as an error). Default: slog.Default(), as
	// worker.Config.Logger.
	Logger *slog.Logger
}

// resolve returns o with the defaults applied, or the error of its first
// invalid field.
func (o Options) resolve() (Options, error) {
	o, err := o.withDefaults()
	if err != nil {
		return o, err
	}
	return o, o.validate()
}

func (o Options) withDefaults() (Options, error) {
	if o.ID == "" {
		id, err := newUUID()
		if err != nil {
			return o, fmt.Errorf("lock: Options.ID: %w", err)
		}
		o.ID = id
	}
	if o.Lease == 0 {
		o.Lease = LeaseDefault
	}
	o.Lease = o.Lease.Truncate(time.Millisecond)
	if o.MetricLabel == nil {
		o.MetricLabel = func(name string) string { return name }
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o, nil
}

func (o Options) validate() error {
	if strings.Contains(o.ID, ":") {
		return fmt.Errorf("lock: invalid Options.ID: %q may not contain ':'", o.ID)
	}
	if o.Lease < LeaseMin {
		return fmt.Errorf("lock: invalid Options.Lease: must be at least %v (got %v)", LeaseMin, o.Lease)
	}
	return nil
}

// Margin is how long before its key may expire in Redis a hold ends
// locally (ErrLockExpired): lease/10, at least MarginMin, at most lease/2.
// The lease is counted from when the write that set it was sent, so the
// hold ends before Redis could let another process in, given clocks that
// run at the same rate.
func Margin(lease time.Duration) time.Duration {
	return min(max(lease/10, MarginMin), lease/2)
}

// Client is one process's access to reentrant locks. It owns the client id
// (the first half of every field), one watchdog that renews all locks this
// process holds in watchdog mode in one batched round trip every Lease/3,
// and one pub/sub subscription per lock name that has waiters, shared by
// all of them. Use one Client per process and Redis; it is safe for
// concurrent use.
type Client struct {
	b        backend
	id       string
	lease    time.Duration
	interval time.Duration // between renewals: lease/3
	metrics  *metrics.Lock // nil without a Registerer
	label    func(string) string
	log      *slog.Logger

	// ctx lives until Close: it bounds the watchdog, the subscriptions and
	// every wait. The Client's lifetime is Close, not a caller's context.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex // guards closed, holds, gates, stale and the entries
	closed bool
	holds  map[lockRef]*entry    // the live hold of each field on each lock
	gates  map[lockRef]*gate     // the writes of each field on each lock, one at a time
	stale  map[lockRef]staleHold // holds Redis may count that no Held stands for

	waiters *wakeup.Set // the Acquire calls waiting for an unlock, by lock
}

// NewClient returns a Client that runs the lock scripts with rdb, on a
// single Redis or a Redis Cluster, and starts its watchdog. Call Close when
// done.
func NewClient(rdb rueidis.Client, opts Options) (*Client, error) {
	if rdb == nil {
		return nil, errors.New("lock: nil rueidis.Client")
	}
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	var rm *metrics.Redis
	var lm *metrics.Lock
	if opts.Registerer != nil {
		if rm, err = metrics.NewRedis(opts.Registerer); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		rm.Touch(script.LockAcquire.Name(), script.LockRelease.Name(), script.LockRenew.Name())
		if lm, err = metrics.NewLock(opts.Registerer); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
	}
	return newClient(redisBackend{c: script.NewConn(rdb, rm)}, opts, lm), nil
}

// newClient returns a Client on b with opts (resolved) recording into m,
// and starts its watchdog.
func newClient(b backend, opts Options, m *metrics.Lock) *Client {
	c := &Client{
		b:        b,
		id:       opts.ID,
		lease:    opts.Lease,
		interval: opts.Lease / 3,
		metrics:  m,
		label:    opts.MetricLabel,
		log:      opts.Logger,
		holds:    make(map[lockRef]*entry),
		gates:    make(map[lockRef]*gate),
		stale:    make(map[lockRef]staleHold),
	}
	// The Client's own lifetime, ended by Close: no caller's context lasts as long.
	c.ctx, c.cancel = context.WithCancel(context.Background()) //nolint:forbidigo // see above
	c.waiters = wakeup.New(c.ctx, &c.wg, b.subscribe, func(name string, err error, retry time.Duration) {
		c.log.Warn("lock: unlock subscription broke; waiters wait for lock TTLs until it is back",
			"lock", name, "err", err, "retry_in", retry)
	})
	c.wg.Add(1)
	go c.watch()
	return c
}

// ID returns the client id, the first half of every field.
func (c *Client) ID() string { return c.id }

// Field returns the hash field that holder writes into a lock it holds:
// "<client id>:<holder>", the same shape as Redisson's "<uuid>:<thread id>".
// Fenced scripts check it to make sure the caller still holds a lock.
func (c *Client) Field(holder string) string { return c.id + ":" + holder }

// Close stops the watchdog and the subscriptions, makes waiting Acquire
// calls return ErrClosed, and ends every hold with ErrClosed. Held locks
// are not released in Redis: they expire after their lease, unless a later
// Client with the same ID gives them back at its holder's last Release.
// Release the locks first for a prompt hand-over. Close waits for the
// Client's goroutines (not for a release or acquire whose caller left; it
// ends within a lease) and may be called more than once.
func (c *Client) Close() {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		for _, e := range c.holds {
			c.end(e, ErrClosed)
		}
	}
	c.mu.Unlock()
	c.waiters.Close() // no goroutine is added while Wait runs
	c.cancel()
	c.wg.Wait()
}

// newUUID returns a random UUID version 4 in its canonical text form.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}
