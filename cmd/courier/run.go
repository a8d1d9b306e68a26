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

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
	"github.com/seed-53d105c9/courier/worker"
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
		d := &daemon{cfg: cfg, log: log}
		d.connect = func(ctx context.Context) (rueidis.Client, error) {
			return dialDaemon(ctx, opt, log, d.waitingFor)
		}
		return d.serve(ctx)
	}
}

// dialDaemon makes the daemon's Redis client with worker.Dial: it waits
// while Redis is unavailable (telling waiting why, for /readyz) and fails
// at once, with what to check, when waiting cannot help.
func dialDaemon(ctx context.Context, opt rueidis.ClientOption, log *slog.Logger, waiting func(error)) (rueidis.Client, error) {
	rdb, err := worker.Dial(ctx, opt, worker.DialOptions{Logger: log, Waiting: waiting})
	if err == nil || ctx.Err() != nil {
		return rdb, err
	}
	addr := strings.Join(opt.InitAddress, ",")
	var re *rueidis.RedisError
	if errors.As(err, &re) { // WRONGPASS, NOAUTH, NOPERM, a bad db
		return nil, fmt.Errorf("the Redis server at %s refused the connection: %w (check redis.username, redis.password, redis.db)", addr, err)
	}
	if opt.TLSConfig != nil {
		return nil, fmt.Errorf("connect to Redis at %s over TLS: %w (check redis.tls and that the server speaks TLS)", addr, err)
	}
	return nil, fmt.Errorf("connect to Redis at %s: %w", addr, err)
}

func queueNames(cfg *config.Config) []string { return slices.Sorted(maps.Keys(cfg.Queues)) }
