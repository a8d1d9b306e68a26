package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// devQueue is the queue courier dev serves.
const devQueue = "demo"

// runDev runs the daemon on an embedded, in-memory Redis-compatible store,
// for trying Courier with nothing installed.
func runDev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("dev", "[--addr HOST:PORT]", stderr)
	addr := fs.String("addr", "127.0.0.1:0", "where the embedded store listens (port 0 = any free port)")
	demo := fs.Bool("demo-jobs", true, "enqueue a few demo jobs at start")
	if err := parse(fs, args); err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

	m := miniredis.NewMiniRedis()
	m.ClockTTL(true) // expire keys on the real clock
	if err := m.StartAddr(*addr); err != nil {
		return fmt.Errorf("start the embedded store on %s: %w", *addr, err)
	}
	defer m.Close()
	fmt.Fprintf(stdout, "courier dev: embedded store listening on %s (try: redis-cli -p %s)\n", m.Addr(), m.Port())
	log.Warn("DEV MODE: the store is in memory; nothing persists when this process stops")

	// miniredis speaks RESP2 only properly, has no CLIENT TRACKING, and
	// answers CLUSTER SLOTS as if it were a one-node cluster.
	rdb, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:       []string{m.Addr()},
		DisableCache:      true,
		AlwaysRESP2:       true,
		ForceSingleClient: true,
	})
	if err != nil {
		return fmt.Errorf("connect to the embedded store: %w", err)
	}
	defer rdb.Close()

	cfg := worker.Config{Logger: log}
	reg := worker.NewRegistry()
	if err := reg.Register(devQueue, logHandler(log), worker.QueueOptions{
		Concurrency: 4,
		MaxAttempts: 3,
		Backoff:     worker.FixedSteps{time.Second, 2 * time.Second},
	}); err != nil {
		return err
	}
	d, err := worker.NewDaemon(rdb, reg, cfg)
	if err != nil {
		return err
	}
	if *demo {
		client, err := worker.NewClient(rdb, cfg)
		if err != nil {
			return err
		}
		if err := enqueueDemo(ctx, client); err != nil {
			return err
		}
	}
	log.Info("serving queue; stop with Ctrl-C", "queue", devQueue)
	return d.Run(ctx)
}

// logHandler logs each job; a payload of "fail" fails, to show retries.
func logHandler(log *slog.Logger) worker.Handler {
	return worker.HandlerFunc(func(_ context.Context, job *worker.Job) error {
		log.Info("job", "queue", job.Queue, "id", job.ID, "attempt", job.Attempt, "payload", string(job.Payload))
		if string(job.Payload) == "fail" {
			return errors.New("the payload asked to fail")
		}
		return nil
	})
}

func enqueueDemo(ctx context.Context, c *worker.Client) error {
	specs := []worker.JobSpec{
		{Queue: devQueue, Payload: []byte("hello from courier dev")},
		{Queue: devQueue, Payload: []byte("this one was scheduled 3s ahead"), Delay: 3 * time.Second},
		{Queue: devQueue, Payload: []byte("fail")},
	}
	if _, err := c.EnqueueMany(ctx, specs); err != nil {
		return fmt.Errorf("enqueue demo jobs: %w", err)
	}
	return nil
}
