package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/config"
)

// defineRun is courier run: the production daemon.
func defineRun(fs *flag.FlagSet, _ string) runFunc {
	cf := addConfigFlags(fs)
	cf.keyFlag("http-addr", "http.addr", "HTTP listen address for /healthz, /readyz, /metrics (and the API under /v1 unless admin.addr is set)")
	cf.keyFlag("log-level", "log.level", "debug, info, warn or error")
	cf.keyFlag("log-format", "log.format", "text or json (durations in seconds, keys ending in _seconds)")
	return func(ctx context.Context, std streams) error {
		cfg, err := cf.load()
		if err != nil {
			earlyJSONLogs(std, fs.Lookup("log-format").Value.String())
			return err
		}
		log := daemonLogger(std, cfg.Log)
		for _, w := range cf.warnings {
			log.Warn("configuration", "warning", w) // #nosec G706 -- slog quotes the value: a variable's name cannot forge a record
		}
		// No queue, or a listener of the API's own with no way to
		// authenticate callers, is refused; the warnings of CheckDaemon are
		// logged where they apply (see serve and newAdminAPI).
		if _, err := cfg.CheckDaemon(); err != nil {
			return invalidConfig(err)
		}
		opt, err := cfg.Redis.ClientOption()
		if err != nil {
			return err
		}
		if cfg.Redis.TLS.Enabled && cfg.Redis.TLS.InsecureSkipVerify {
			log.Warn("redis.tls.insecure_skip_verify is true: the Redis server's certificate is not checked, " +
				"so anyone on the network path can pose as Redis and read or change every job; set redis.tls.ca_file instead")
		}
		log.Info("courier starting", "version", version, "redis", cfg.Redis.Addr, "prefix", cfg.Redis.Prefix,
			"queues", queueNames(cfg), "shutdown_timeout", cfg.Shutdown.Timeout, "lease", cfg.Lease.Duration)
		d := &daemon{cfg: cfg, log: log, connect: func(ctx context.Context) (rueidis.Client, error) {
			return connectWithRetry(ctx, opt, log)
		}}
		return d.serve(ctx)
	}
}

// Reconnect delays at start-up: Redis may start after Courier.
const (
	connectRetryMin = 100 * time.Millisecond
	connectRetryMax = 5 * time.Second
)

// connectWithRetry connects to Redis, retrying with backoff until ctx ends:
// rueidis.NewClient fails at once when Redis is down.
func connectWithRetry(ctx context.Context, opt rueidis.ClientOption, log *slog.Logger) (rueidis.Client, error) {
	wait := connectRetryMin
	for attempt := 1; ; attempt++ {
		rdb, err := rueidis.NewClient(opt)
		if err == nil {
			if attempt > 1 {
				log.Info("connected to Redis", "attempts", attempt)
			}
			return rdb, nil
		}
		// Redis answered with an error (WRONGPASS, NOAUTH, a bad db):
		// waiting will not fix the configuration.
		var re *rueidis.RedisError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("the Redis server at %s refused the connection: %w (check redis.username, redis.password, redis.db)", strings.Join(opt.InitAddress, ","), err)
		}
		log.Warn("cannot reach Redis; retrying", "addr", strings.Join(opt.InitAddress, ","), "attempt", attempt, "retry_in", wait, "err", err)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("connect to Redis: %w", ctx.Err())
		case <-t.C:
		}
		wait = min(wait*2, connectRetryMax)
	}
}

func queueNames(cfg *config.Config) []string { return slices.Sorted(maps.Keys(cfg.Queues)) }
