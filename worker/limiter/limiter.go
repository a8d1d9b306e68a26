package limiter

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker/internal/metrics"
	"github.com/seed-53d105c9/courier/worker/internal/script"
	"github.com/seed-53d105c9/courier/worker/internal/wakeup"
)

// PrefixDefault is the key prefix of Options.Prefix: the default of
// worker.Config.Prefix, so a limiter's keys sit beside the queues'.
const PrefixDefault = "courier"

// Options configures a Limiter. The zero value is usable.
type Options struct {
	// Prefix begins every key the Limiter writes
	// ("<Prefix>:{limiter:<name>}:slots" and ":rate"): 1 to 128 bytes of
	// A-Z a-z 0-9 . _ - :. Processes that share a limit must use the same
	// Prefix. Default: PrefixDefault ("courier").
	Prefix string

	// ID names this Limiter in the slots it holds: each slot's holder in
	// Redis is "<ID>:<n>", which an operator reading the slots key sees.
	// It must be unique among the Limiters sharing a Redis; 1 to 200
	// bytes without whitespace. Default: "<host>-<pid>-<8 random hex>".
	ID string

	// Registerer, when not nil, receives the Redis metrics of the limiter
	// scripts (courier_redis_script_seconds, courier_redis_errors_total,
	// courier_redis_refused_total, labelled by script name). Limiters,
	// Daemons and worker Clients on one Registerer share the series.
	// Default: nil (no metrics).
	Registerer prometheus.Registerer

	// Logger receives warnings about renewals and subscriptions (nothing
	// that is also returned as an error). Default: slog.Default(), as
	// worker.Config.Logger.
	Logger *slog.Logger
}

func (o Options) resolve() (Options, error) {
	if o.Prefix == "" {
		o.Prefix = PrefixDefault
	}
	if o.ID == "" {
		id, err := defaultID()
		if err != nil {
			return o, fmt.Errorf("limiter: Options.ID: %w", err)
		}
		o.ID = id
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := validatePrefix(o.Prefix); err != nil {
		return o, fmt.Errorf("limiter: %w", err)
	}
	if err := validateID(o.ID); err != nil {
		return o, fmt.Errorf("limiter: %w", err)
	}
	return o, nil
}

// defaultID returns "<host>-<pid>-<8 random hex>".
func defaultID() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "host"
	}
	var clean []byte
	for i := 0; i < len(host) && len(clean) < 100; i++ {
		if c := host[i]; c > ' ' && c < 0x7f {
			clean = append(clean, c)
		}
	}
	return string(clean) + "-" + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:]), nil
}

// Limiter gives application code — job handlers, HTTP handlers, any
// process calling an external API — fleet-wide limits on Redis: a number
// of concurrent slots per name (Acquire, TryAcquire), and a rate per name
// (Take, Wait). Every process that shares a limit name and Prefix shares
// the limit. Use one Limiter per process and Redis; it is safe for
// concurrent use. Close it when done.
type Limiter struct {
	b      backend
	prefix string
	id     string
	log    *slog.Logger
	seq    atomic.Uint64 // the last holder number handed out

	// ctx lives until Close: it bounds the watchdogs, the subscriptions and
	// every wait. The Limiter's lifetime is Close, not a caller's context.
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu     sync.Mutex // guards closed and slots
	closed bool
	slots  map[*Slot]struct{}

	waiters *wakeup.Set // the Acquire calls waiting for a free slot, by limit
}

// New returns a Limiter that runs the limiter scripts with rdb, on a single
// Redis or a Redis Cluster. It fails only on invalid Options; it sends
// nothing to Redis.
func New(rdb rueidis.Client, opts Options) (*Limiter, error) {
	if rdb == nil {
		return nil, errors.New("limiter: nil rueidis.Client")
	}
	opts, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	var rm *metrics.Redis
	if opts.Registerer != nil {
		if rm, err = metrics.NewRedis(opts.Registerer); err != nil {
			return nil, fmt.Errorf("limiter: %w", err)
		}
		rm.Touch(script.LimiterAcquire.Name(), script.LimiterExtend.Name(), script.LimiterRelease.Name(), script.LimiterTake.Name())
	}
	return newLimiter(redisBackend{c: script.NewConn(rdb, rm), plain: new(atomic.Bool)}, opts), nil
}

// newLimiter returns a Limiter on b with opts (resolved).
func newLimiter(b backend, opts Options) *Limiter {
	l := &Limiter{
		b:      b,
		prefix: opts.Prefix,
		id:     opts.ID,
		log:    opts.Logger,
		slots:  make(map[*Slot]struct{}),
	}
	// The Limiter's own lifetime, ended by Close: no caller's context lasts as long.
	l.ctx, l.cancel = context.WithCancel(context.Background()) //nolint:forbidigo // see above
	l.waiters = wakeup.New(l.ctx, &l.wg, b.subscribe, func(name string, err error, retry time.Duration) {
		l.log.Warn("limiter: free-slot subscription broke; waiters wait for leases until it is back",
			"limit", name, "err", err, "retry_in", retry)
	})
	return l
}

// ID returns the Limiter's id, the first part of each of its holders.
func (l *Limiter) ID() string { return l.id }

// Close stops renewing the Limiter's slots, ends their contexts with
// ErrClosed, makes waiting calls return ErrClosed and stops the
// subscriptions. Held slots are not released in Redis: they free when
// their lease passes. Release them first for a prompt hand-over. Close
// waits for the Limiter's goroutines and may be called more than once.
func (l *Limiter) Close() {
	l.mu.Lock()
	l.closed = true
	slots := make([]*Slot, 0, len(l.slots))
	for s := range l.slots {
		slots = append(slots, s)
	}
	l.mu.Unlock()
	for _, s := range slots {
		s.end(ErrClosed)
	}
	l.waiters.Close() // no subscription starts after this
	l.cancel()
	l.wg.Wait()
}

// keys of a limit: one hash tag per name, so each script's key and the
// channel share a slot on a Redis Cluster. A queue name cannot hold ':',
// so no queue's tag is ever "{limiter:…}".
func (l *Limiter) slotsKey(name string) string { return l.prefix + ":{limiter:" + name + "}:slots" }
func (l *Limiter) rateKey(name string) string  { return l.prefix + ":{limiter:" + name + "}:rate" }
func (l *Limiter) channel(name string) string  { return l.prefix + ":{limiter:" + name + "}:free" }

// holder returns a new holder name, unique to this Limiter.
func (l *Limiter) holder() string {
	return l.id + ":" + strconv.FormatUint(l.seq.Add(1), 10)
}
