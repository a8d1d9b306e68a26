package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
	"github.com/seed-53d105c9/courier/worker"
)

// devQueue is the queue courier dev serves, with the log handler.
const devQueue = "demo"

// defineDev is courier dev: the daemon on an embedded, in-memory
// Redis-compatible store, for trying Courier with nothing installed.
func defineDev(fs *flag.FlagSet, _ string) runFunc {
	addr := fs.String("addr", "127.0.0.1:0", "where the embedded store listens (port 0 = any free port; loopback only, see --insecure-expose-store)")
	expose := fs.Bool("insecure-expose-store", false, "let --addr listen beyond loopback: the embedded store has no password, so anyone who reaches it may read and change every job")
	httpAddr := fs.String("http-addr", config.HTTPAddrDefault, "HTTP listen address for /healthz, /readyz, /metrics and the API under /v1 (loopback only)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	format := fs.String("log-format", "text", "text or json (durations in seconds, keys ending in _seconds; the banner becomes one record)")
	demo := fs.Bool("demo-jobs", true, "enqueue a few demo jobs at start")
	return func(ctx context.Context, std streams) error {
		// The API is served without authentication here: loopback only.
		if !loopback(*httpAddr) {
			return &usageError{field: "--http-addr", msg: fmt.Sprintf("--http-addr %q: courier dev serves the HTTP API without authentication, "+
				"so it listens on loopback addresses only (127.0.0.1, ::1, localhost)", *httpAddr)}
		}
		// The embedded store has no password: beyond loopback, anyone who
		// reaches it may read and change every job.
		if !loopback(*addr) && !*expose {
			return &usageError{field: "--addr", msg: fmt.Sprintf("--addr %q: the embedded store has no password, so anyone who reaches it "+
				"could read and change every job; courier dev listens on loopback addresses only (127.0.0.1, ::1, localhost). "+
				"Add --insecure-expose-store to listen there anyway, on a network you trust", *addr)}
		}
		if *format != "text" && *format != "json" {
			return &usageError{field: "--log-format", msg: fmt.Sprintf("--log-format must be text or json (got %q)", *format)}
		}
		if *format == "json" {
			std.console.useJSON(newLogger(std.err, config.Log{Level: "info", Format: "json"}))
		}

		m := miniredis.NewMiniRedis()
		m.ClockTTL(true) // expire keys on the real clock
		if err := m.StartAddr(*addr); err != nil {
			return fmt.Errorf("start the embedded store on %s: %w", *addr, err)
		}
		defer m.Close()

		cfg, err := config.Load(config.Sources{Flags: map[string]any{
			"redis.addr":                    m.Addr(),
			"http.addr":                     *httpAddr,
			"log.level":                     *level,
			"log.format":                    *format,
			"queues.demo.handler":           "log",
			"queues.demo.concurrency":       "4",
			"queues.demo.max_attempts":      "3",
			"queues.demo.backoff.steps":     "1s,2s",
			"queues.demo.log.payload_bytes": "1024",
			// A job every 2s, so that the web UI's demo queue moves.
			"queues.demo.periodic.tick.every":   "2s",
			"queues.demo.periodic.tick.payload": `{"demo": "tick"}`,
			"shutdown.timeout":                  "5s",
			"admin.insecure_no_auth":            "true",
		}})
		if err != nil {
			return fmt.Errorf("dev configuration: %w", err)
		}
		log := daemonLogger(std, cfg.Log)
		log.Warn("DEV MODE: the store is in memory; nothing persists when this process stops")
		if !loopback(*addr) {
			log.Warn("EMBEDDED STORE WITHOUT A PASSWORD beyond loopback (--insecure-expose-store): anyone who reaches "+
				m.Addr()+" may read and change every job", "addr", m.Addr())
		}

		d := &daemon{cfg: cfg, log: log,
			connect:   func(ctx context.Context) (rueidis.Client, error) { return dialDev(ctx, m.Addr(), cfg, *demo) },
			listening: func(httpAddr string) { devBanner(std, log, cfg.Log.Format == "json", m, httpAddr) },
		}
		return d.serve(ctx)
	}
}

// devBanner says how to use the dev daemon: lines to copy on stdout, or,
// with JSON logs, one record on stderr with the same commands.
func devBanner(std streams, log *slog.Logger, asJSON bool, m *miniredis.Miniredis, httpAddr string) {
	prog := programName()
	howto := [][2]string{
		{"enqueue", fmt.Sprintf("%s enqueue --redis %s --queue %s --payload 'hello'", prog, m.Addr(), devQueue)},
		{"inspect", fmt.Sprintf("%s inspect --redis %s --queue %s", prog, m.Addr(), devQueue)},
		{"redis_cli", "redis-cli -p " + m.Port()},
		{"web_ui", uiURL(httpAddr, false)},
		{"metrics", "http://" + httpAddr + "/metrics"},
		{"http_api", fmt.Sprintf(`curl -d '{"payload": {"hello": "world"}}' http://%s/v1/queues/%s/jobs`, httpAddr, devQueue)},
	}
	if asJSON {
		attrs := []any{"store", m.Addr(), "http", httpAddr}
		for _, h := range howto {
			attrs = append(attrs, h[0], h[1])
		}
		log.Info("courier dev: embedded store listening (nothing persists)", attrs...)
		return
	}
	fmt.Fprintf(std.out, "courier dev: embedded store listening on %s (nothing persists)\n", m.Addr())
	labels := map[string]string{"web_ui": "web UI:", "enqueue": "enqueue a job:", "inspect": "inspect:", "redis_cli": "redis-cli:", "metrics": "metrics:", "http_api": "HTTP API:"}
	for _, h := range howto {
		fmt.Fprintf(std.out, "  %-15s %s\n", labels[h[0]], h[1])
	}
	fmt.Fprintf(std.out, "  %-15s %s\n", "stop:", "Ctrl-C")
}

// dialDev connects to the embedded store and, if asked, enqueues the demo
// jobs. miniredis speaks RESP2 only properly, has no CLIENT TRACKING, and
// answers CLUSTER SLOTS as if it were a one-node cluster.
func dialDev(ctx context.Context, addr string, cfg *config.Config, demo bool) (rueidis.Client, error) {
	rdb, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{addr},
		DisableCache:      true,
		AlwaysRESP2:       true,
		ForceSingleClient: true,
	})
	if err != nil {
		return nil, fmt.Errorf("connect to the embedded store: %w", err)
	}
	if demo {
		if err := enqueueDemo(ctx, rdb, cfg); err != nil {
			rdb.Close()
			return nil, err
		}
	}
	return rdb, nil
}

func enqueueDemo(ctx context.Context, rdb rueidis.Client, cfg *config.Config) error {
	c, err := worker.NewClient(rdb, cfg.Worker(nil))
	if err != nil {
		return err
	}
	specs := []worker.JobSpec{
		{Queue: devQueue, Payload: []byte("hello from courier dev")},
		{Queue: devQueue, Payload: []byte("this one was scheduled 3s ahead"), Delay: 3 * time.Second},
	}
	if _, err := c.EnqueueMany(ctx, specs); err != nil {
		return fmt.Errorf("enqueue demo jobs: %w", err)
	}
	return nil
}

// programName is how the user ran courier, for commands printed to copy.
func programName() string {
	if p := os.Args[0]; strings.Contains(filepath.Base(p), "courier") && !strings.HasSuffix(p, ".test") {
		return p
	}
	return "courier"
}
