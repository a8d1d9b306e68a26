package testkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// startSingle provides the single Redis: REDIS_ADDR, else a redis-server
// process of the test binary's own on a free port.
func startSingle(ctx context.Context, logf func(string, ...any)) ([]string, error) {
	if addr := os.Getenv(EnvAddr); addr != "" {
		logf("testkit: single Redis at %s (%s)", addr, EnvAddr)
		return []string{addr}, nil
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, fmt.Errorf("%s\nredis-server: %w", help, err)
	}
	srv, err := startServers(ctx, 1, false)
	if err != nil {
		return nil, fmt.Errorf("%s\nlocal redis-server: %w", help, err)
	}
	logf("testkit: single Redis: local redis-server at %s", srv[0].addr)
	return []string{srv[0].addr}, nil
}
