// Command example-worker is a complete program that runs Courier's worker
// with its own handler, the way you would in your own service: build a
// Registry, register a handler per queue, hand both to a Daemon, and run it
// until SIGTERM. Run it against a Redis server:
//
//	go run ./cmd/example-worker --redis 127.0.0.1:6379
//	courier enqueue --redis 127.0.0.1:6379 --queue signups --payload '{"email":"ada@example.com","name":"Ada"}'
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// Signup is the payload of a job on the signups queue.
type Signup struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

// welcome is the handler: it receives the decoded payload. Returning an
// error retries the job with backoff; worker.Permanent sends it to the dead
// set at once; worker.Snooze(d) runs it again later without spending an
// attempt. ctx ends at the job's timeout and at shutdown.
func welcome(log *slog.Logger) func(ctx context.Context, job *worker.Job, s Signup) error {
	return func(ctx context.Context, job *worker.Job, s Signup) error {
		if !strings.Contains(s.Email, "@") {
			return worker.Permanent(fmt.Errorf("email %q has no @", s.Email))
		}
		select {
		case <-time.After(10 * time.Millisecond): // pretend to send an email
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		log.Info("welcome email sent", "job", job.ID, "attempt", job.Attempt, "email", s.Email, "name", s.Name)
		return nil
	}
}

func main() {
	addr := flag.String("redis", "127.0.0.1:6379", "Redis address")
	prefix := flag.String("prefix", worker.PrefixDefault, "key prefix, shared with the producers")
	flag.Parse()

	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(*addr, *prefix, log); err != nil {
		log.Error("example-worker failed", "err", err)
		os.Exit(1)
	}
}

func run(addr, prefix string, log *slog.Logger) error {
	// The first SIGTERM or Ctrl-C starts a graceful drain: claiming stops,
	// running jobs get Config.ShutdownTimeout to finish, and the rest are
	// put back without spending an attempt.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	rdb, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
	if err != nil {
		return fmt.Errorf("connect to Redis at %s: %w", addr, err)
	}
	defer rdb.Close()

	reg := worker.NewRegistry()
	if err := reg.Register("signups", worker.JSONHandler(welcome(log)), worker.QueueOptions{
		Concurrency: 5,
		MaxAttempts: 8,
		Backoff:     worker.FixedSteps{15 * time.Second, time.Minute, 10 * time.Minute},
		Timeout:     30 * time.Second,
	}); err != nil {
		return err
	}
	d, err := worker.NewDaemon(rdb, reg, worker.Config{Prefix: prefix, Logger: log})
	if err != nil {
		return err
	}
	if err := d.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}
