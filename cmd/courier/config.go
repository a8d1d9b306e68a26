package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/cmd/internal/config"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// configFlags are the flags every command that reads the configuration
// takes. Flags override the file and the environment only when given.
type configFlags struct {
	fs   *flag.FlagSet
	file string
	keys map[string]string // flag name → config key
	// warnings are what the last load found suspicious but not wrong,
	// such as COURIER_* variables that set nothing; courier run logs them.
	warnings []string
}

// addConfigFlags adds --config and --redis to fs.
func addConfigFlags(fs *flag.FlagSet) *configFlags {
	f := &configFlags{fs: fs, keys: map[string]string{"redis": "redis.addr", "prefix": "redis.prefix"}}
	fs.StringVar(&f.file, "config", "", "YAML configuration file (see configs/courier.yaml); COURIER_* variables override it")
	fs.String("redis", "", "Redis address(es), host:port[,host:port...]; overrides redis.addr")
	fs.String("prefix", "", "key prefix; overrides redis.prefix")
	return f
}

// keyFlag adds a string flag that overrides config key.
func (f *configFlags) keyFlag(name, key, usage string) {
	f.fs.String(name, "", usage+"; overrides "+key)
	f.keys[name] = key
}

// load reads the configuration: defaults, the file, the environment, then
// the flags the user set.
func (f *configFlags) load() (*config.Config, error) {
	l, err := loadConfigFull(f, os.Environ())
	f.warnings = l.Warnings
	if err != nil {
		return nil, invalidConfig(err)
	}
	return l.Config, nil
}

// invalidConfig words a configuration error for the command line: the
// problems one per line under "invalid configuration:".
func invalidConfig(err error) error {
	if config.IsProblem(err) {
		return fmt.Errorf("invalid configuration:\n  %s", strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	return err
}

// dialRedis connects the client commands: once, failing with the address
// named when Redis cannot be reached; worker.IsRedisUnavailable tells an
// unreachable Redis (exit 5) from one that answered (a refused password is
// not fixed by waiting).
func dialRedis(ctx context.Context, cfg *config.Config) (rueidis.Client, error) {
	opt, err := cfg.Redis.ClientOption()
	if err != nil {
		return nil, err
	}
	rdb, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("connect to Redis at %s: %w", strings.Join(cfg.Redis.Addr, ","), err)
	}
	if err := rdb.Do(ctx, rdb.B().Ping().Build()).Error(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("reach Redis at %s: %w", strings.Join(cfg.Redis.Addr, ","), err)
	}
	return rdb, nil
}

// openClient loads the configuration and connects an operator's client,
// for the client commands. close releases the connection.
func (f *configFlags) openClient(ctx context.Context) (*admin.Client, func(), error) {
	return openWith(ctx, f, admin.NewClient)
}

// openProducer loads the configuration and connects an application's
// client, for queue wait (WaitEmpty is the application's, not an
// operator's verb). close releases the connection.
func (f *configFlags) openProducer(ctx context.Context) (*worker.Client, func(), error) {
	return openWith(ctx, f, worker.NewClient)
}

// openWith loads the configuration, connects to Redis and makes a client
// with newClient; close releases the connection.
func openWith[C any](ctx context.Context, f *configFlags, newClient func(rueidis.Client, worker.Config) (C, error)) (client C, close func(), err error) {
	cfg, err := f.load()
	if err != nil {
		return client, nil, err
	}
	rdb, err := dialRedis(ctx, cfg)
	if err != nil {
		return client, nil, err
	}
	if client, err = newClient(rdb, cfg.Worker(nil)); err != nil {
		rdb.Close()
		return client, nil, err
	}
	return client, rdb.Close, nil
}
