package bench

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/rediskeys"
)

// queue is the one queue every mode uses.
const queue = "bench"

// errIncomplete is returned when a run ends before every job ran.
var errIncomplete = errors.New("not every job ran")

// Run parses args (the flags of courier bench), runs the chosen mode against
// Redis, or against a running daemon's API, and prints its figures as one
// line to stdout. Problems with args are returned as a *UsageError (one
// line, nothing printed); -h prints the flags to stdout and returns
// flag.ErrHelp. The daemon's
// warnings and cleanup failures go to stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stdout)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if againstAPI(o.mode) {
		var line string
		if o.mode == "authflood" {
			line, err = authflood(runCtx, o)
		} else {
			line, err = conns(runCtx, o, stderr)
		}
		if err != nil {
			return err
		}
		return report(stdout, line, o.json)
	}

	addrs := o.redisAddrs()
	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs, DisableCache: true})
	if err != nil {
		return fmt.Errorf("connect to Redis at %s: %w", strings.Join(addrs, ","), err)
	}
	defer rdb.Close()
	if o.cluster != "" && rdb.Mode() != rueidis.ClientModeCluster {
		return fmt.Errorf("--cluster %s: not a Redis Cluster (give --redis ADDR for a single Redis)", o.cluster)
	}

	b := &bench{opts: o, rdb: rdb, counted: &countingClient{Client: rdb}, prefix: "courier-bench-" + randomHex(4), stderr: stderr}
	if o.metrics {
		b.registry = prometheus.NewRegistry()
	}
	// The cleanup runs after the mode has stopped its daemon, and also when
	// the run timed out or ctx was cancelled.
	defer b.cleanup(ctx)
	if o.partitions > 1 {
		if err := b.recordLayout(runCtx); err != nil {
			return err
		}
	}
	var line string
	switch o.mode {
	case "throughput":
		line, err = b.throughput(runCtx)
	case "latency":
		line, err = b.latency(runCtx)
	case "delayed":
		line, err = b.delayed(runCtx)
	case "idle":
		line, err = b.idle(runCtx)
	case "api":
		line, err = b.api(runCtx)
	case "pause":
		line, err = b.pause(runCtx)
	case "priority":
		line, err = b.priority(runCtx)
	case "cancel":
		line, err = b.cancelRunning(runCtx)
	case "keys":
		line, err = b.keysMode(runCtx)
	}
	if err != nil {
		return err
	}
	return report(stdout, line, o.json)
}

// bench holds one run's connections and key prefix.
type bench struct {
	opts    options
	rdb     rueidis.Client  // for INFO and cleanup: not counted
	counted *countingClient // what Courier uses: every command counted
	prefix  string
	stderr  io.Writer
	// registry receives the metrics of the producer and the daemon; nil
	// with --metrics=false.
	registry *prometheus.Registry
	// tracing traces the producer and the daemon (throughput --trace);
	// nil without.
	tracing *tracing
}

func (b *bench) config() worker.Config {
	cfg := worker.Config{
		Prefix:          b.prefix,
		Logger:          slog.New(slog.NewTextHandler(b.stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
		ShutdownTimeout: 5 * time.Second,
	}
	if b.registry != nil {
		cfg.Registerer = b.registry
	}
	if b.tracing != nil {
		cfg.TracerProvider = b.tracing.provider
	}
	return cfg
}

// startDaemon runs a daemon with handler on the bench queue until the
// returned stop function is called; stop waits for it to drain.
func (b *bench) startDaemon(ctx context.Context, h worker.Handler) (stop func() error, err error) {
	return b.startDaemonOn(ctx, 0, h)
}

// queueOptions are the bench queue's options in every daemon of a run.
func (b *bench) queueOptions() worker.QueueOptions {
	return worker.QueueOptions{Concurrency: b.opts.concurrency, Partitions: b.opts.partitions,
		RetainCompleted: worker.Retention{Count: b.opts.retain}}
}

// recordLayout runs a daemon on the mode's queues (the bench queue, and
// the keys mode's others) until it serves, then stops it. A daemon records
// a queue's partitions in Redis as it starts and producers read them
// there: without this, the jobs a mode enqueues before its daemon starts
// would all go to partition 0. It fails when the number read back (the
// field "partitions" of a queue's settings hash) is not --partitions.
func (b *bench) recordLayout(ctx context.Context) error {
	reg := worker.NewRegistry()
	noop := worker.HandlerFunc(func(context.Context, *worker.Job) error { return nil })
	for _, q := range b.queues() {
		if err := reg.Register(q, noop, b.queueOptions()); err != nil {
			return err
		}
	}
	d, err := worker.NewDaemon(b.rdb, reg, b.config())
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx) }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !d.Running() {
		select {
		case err := <-done:
			cancel()
			return fmt.Errorf("record the bench queue's partitions: %w", cmp.Or(err, ctx.Err()))
		case <-tick.C:
		}
	}
	cancel()
	if err := <-done; err != nil {
		return fmt.Errorf("record the bench queue's partitions: %w", err)
	}
	for _, q := range b.queues() {
		key := rediskeys.QueueKeys(b.prefix, q).Settings
		got, err := b.rdb.Do(ctx, b.rdb.B().Hget().Key(key).Field("partitions").Build()).ToString()
		if err != nil || got != strconv.Itoa(b.opts.partitions) {
			return fmt.Errorf("the daemon recorded partitions %q in %s (%v); want %d", got, key, err, b.opts.partitions)
		}
	}
	return nil
}

// queues are the queues the mode uses: the bench queue, and for the keys
// mode one queue per phase besides (keys.go).
func (b *bench) queues() []string {
	if b.opts.mode == "keys" {
		return keysQueues
	}
	return []string{queue}
}

// cleanup deletes every key the run made: every key under its own
// prefix, found with SCAN on each node. A daemon stopped a moment after
// it started may leave a partition's leader lock behind (an acquire it
// gave up on may have run in Redis; the lock expires after its lease), so
// the keys are not listed by name.
func (b *bench) cleanup(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	keys := []string{rediskeys.QueuesKey(b.prefix)}
	for addr, node := range b.rdb.Nodes() {
		for cursor := uint64(0); ; {
			e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(b.prefix+":*").Count(1000).Build()).AsScanEntry()
			if err != nil {
				fmt.Fprintf(b.stderr, "courier bench: list the keys on %s: %v\n", addr, err)
				break
			}
			keys = append(keys, e.Elements...)
			if cursor = e.Cursor; cursor == 0 {
				break
			}
		}
	}
	for _, key := range keys {
		if err := b.rdb.Do(ctx, b.rdb.B().Unlink().Key(key).Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
			fmt.Fprintf(b.stderr, "courier bench: delete %s: %v\n", key, err)
		}
	}
}

func (b *bench) payload() []byte {
	p := make([]byte, b.opts.payload)
	for i := range p {
		p[i] = 'x'
	}
	return p
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// sleep waits d, or less when ctx ends first; it reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
