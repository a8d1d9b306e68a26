package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/api"
	"github.com/seed-53d105c9/courier/worker"
)

// benchOpts are the flags of courier bench.
type benchOpts struct {
	addr        string
	mode        string
	n           int
	concurrency int
	every       time.Duration
	delay       time.Duration
	payload     int
	backlog     int
	duration    time.Duration
	timeout     time.Duration
	metrics     bool
	batch       int
	clients     int
}

const benchQueue = "bench"

func runBench(ctx context.Context, args []string, std streams) error {
	stdout, stderr := std.out, std.err
	var o benchOpts
	fs := newFlagSet("bench", "--redis ADDR --mode throughput|latency|delayed|idle|api [flags]", stderr)
	fs.StringVar(&o.addr, "redis", "127.0.0.1:6379", "Redis `address` (host:port; a cluster node works too)")
	fs.StringVar(&o.mode, "mode", "throughput", "what to measure: throughput, latency, delayed, idle or api (enqueue through the HTTP API's batch endpoint)")
	fs.IntVar(&o.n, "n", 0, "number of jobs (default: throughput 200000, latency 500, delayed 1000, api 50000)")
	fs.IntVar(&o.concurrency, "concurrency", 64, "handler goroutines")
	fs.DurationVar(&o.every, "every", 20*time.Millisecond, "latency: time between two enqueues")
	fs.DurationVar(&o.delay, "delay", 2*time.Second, "delayed: how far ahead the first job is due")
	fs.IntVar(&o.payload, "payload", 100, "payload size in `bytes`")
	fs.IntVar(&o.backlog, "backlog", 0, "throughput: jobs scheduled an hour ahead before the run, to show that a backlog does not slow claiming")
	fs.DurationVar(&o.duration, "duration", 10*time.Second, "idle: how long to watch an idle pool")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.BoolVar(&o.metrics, "metrics", true, "record the Prometheus metrics, as courier run does (--metrics=false measures their cost)")
	fs.IntVar(&o.batch, "batch", 1000, "api: jobs per request (1 to 1000)")
	fs.IntVar(&o.clients, "clients", 8, "api: concurrent HTTP clients")
	if err := parse(fs, args); err != nil {
		return err
	}
	if o.n == 0 {
		o.n = map[string]int{"throughput": 200000, "latency": 500, "delayed": 1000, "api": 50000}[o.mode]
	}
	var problems []string
	if !slices.Contains([]string{"throughput", "latency", "delayed", "idle", "api"}, o.mode) {
		problems = append(problems, fmt.Sprintf("--mode %q: want throughput, latency, delayed, idle or api", o.mode))
	}
	if o.batch < 1 || o.batch > api.MaxBatchLimit || o.clients < 1 {
		problems = append(problems, fmt.Sprintf("--batch must be 1 to %d and --clients at least 1", api.MaxBatchLimit))
	}
	if o.n < 1 && o.mode != "idle" {
		problems = append(problems, "--n must be at least 1")
	}
	if o.concurrency < 1 {
		problems = append(problems, "--concurrency must be at least 1")
	}
	if o.every <= 0 || o.delay < 0 || o.payload < 0 || o.backlog < 0 || o.duration <= 0 || o.timeout <= 0 {
		problems = append(problems, "--every, --duration and --timeout must be positive; --delay, --payload and --backlog not negative")
	}
	if len(problems) > 0 {
		fmt.Fprintln(stderr, strings.Join(problems, "\n"))
		fs.Usage()
		return errUsage
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{o.addr}, DisableCache: true})
	if err != nil {
		return fmt.Errorf("connect to Redis at %s: %w", o.addr, err)
	}
	defer rdb.Close()
	counted := &countingClient{Client: rdb}

	b := &bench{opts: o, rdb: rdb, counted: counted, prefix: "courier-bench-" + randomHex(4), stderr: stderr}
	if o.metrics {
		b.registry = prometheus.NewRegistry()
	}
	defer b.cleanup()
	var line string
	switch o.mode {
	case "throughput":
		line, err = b.throughput(ctx)
	case "latency":
		line, err = b.latency(ctx)
	case "delayed":
		line, err = b.delayed(ctx)
	case "idle":
		line, err = b.idle(ctx)
	case "api":
		line, err = b.api(ctx)
	}
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, line)
	return nil
}

// bench holds one run's connections and key prefix.
type bench struct {
	opts    benchOpts
	rdb     rueidis.Client  // for INFO and cleanup: not counted
	counted *countingClient // what Courier uses: every command counted
	prefix  string
	stderr  io.Writer
	// registry receives the metrics of the producer and the daemon; nil
	// with --metrics=false.
	registry *prometheus.Registry
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
	return cfg
}

// startDaemon runs a daemon with handler on the bench queue until the
// returned stop function is called; stop waits for it to drain.
func (b *bench) startDaemon(ctx context.Context, h worker.Handler) (stop func() error, err error) {
	reg := worker.NewRegistry()
	if err := reg.Register(benchQueue, h, worker.QueueOptions{Concurrency: b.opts.concurrency}); err != nil {
		return nil, err
	}
	d, err := worker.NewDaemon(b.counted, reg, b.config())
	if err != nil {
		return nil, err
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(runCtx) }()
	return func() error { cancel(); return <-done }, nil
}

// cleanup deletes every key the run made.
func (b *bench) cleanup() {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(context.Background()), 30*time.Second)
	defer cancel()
	k := worker.QueueKeys(b.prefix, benchQueue)
	for _, key := range append(k, b.prefix+":queues") {
		if err := b.rdb.Do(ctx, b.rdb.B().Unlink().Key(key).Build()).Error(); err != nil {
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

// waitDrained waits until the bench queue has no ready or active jobs.
func (b *bench) waitDrained(ctx context.Context, c *worker.Client) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		s, err := c.Stats(ctx, benchQueue)
		if err != nil {
			return err
		}
		if s.Ready == 0 && s.Active == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the queue to drain (%d ready, %d active): %w", s.Ready, s.Active, ctx.Err())
		case <-t.C:
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// percentile returns the p-th percentile (0..100) of sorted values.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

var errIncomplete = errors.New("not every job ran")
