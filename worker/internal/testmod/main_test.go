package testmod_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// embedded returns a client of an embedded store of the test's own, as
// courier dev runs it (miniredis: no script flags, no sharded pub/sub),
// closed at the test's end.
func embedded(t testing.TB) rueidis.Client {
	t.Helper()
	m := miniredis.RunT(t)
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{m.Addr()}, DisableCache: true, AlwaysRESP2: true, ForceSingleClient: true,
	})
	if err != nil {
		t.Fatalf("connect to the embedded store: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

// forEachBackend runs f as parallel subtests "single" and "cluster", each
// with its own Redis client and key prefix.
func forEachBackend(t *testing.T, f func(t *testing.T, rdb rueidis.Client, prefix string)) {
	t.Helper()
	for _, b := range []struct {
		name    string
		connect func(testing.TB) rueidis.Client
	}{{"single", testkit.Single}, {"cluster", testkit.Cluster}} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			f(t, b.connect(t), testkit.Prefix(t))
		})
	}
}

// The helpers below are the worker package tests' own (worker/main_test.go),
// for the tracing tests that live here.

// testLogger logs warnings and errors to the test's output.
func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// testConfig is the Config the integration tests start from: short lease,
// quick recovery, a shutdown timeout that keeps cleanups short. The safety
// poll is an hour, so a job that starts at all was started by a claim after
// a wake-up message, the head timer or a freed slot, never by polling.
func testConfig(t testing.TB, prefix string) worker.Config {
	return worker.Config{
		Prefix:          prefix,
		Lease:           300 * time.Millisecond,
		PollInterval:    time.Hour,
		ShutdownTimeout: 2 * time.Second,
		RecoverInterval: 100 * time.Millisecond,
		Logger:          testLogger(t),
	}
}

func newClient(t testing.TB, rdb rueidis.Client, cfg worker.Config) *worker.Client {
	t.Helper()
	c, err := worker.NewClient(rdb, cfg)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// enqueue adds one job and fails the test on an error.
func enqueue(t testing.TB, c *worker.Client, spec worker.JobSpec) string {
	t.Helper()
	id, err := c.Enqueue(t.Context(), spec)
	if err != nil {
		t.Fatalf("Enqueue(%+v): %v", spec, err)
	}
	return id
}

// getJob reads a job and fails the test on an error.
func getJob(t testing.TB, c *worker.Client, queue, id string) *worker.Job {
	t.Helper()
	job, err := c.Get(t.Context(), queue, id)
	if err != nil {
		t.Fatalf("Get(%q, %q): %v", queue, id, err)
	}
	return job
}

// daemon is a Daemon running in the background of a test.
type daemon struct {
	*worker.Daemon
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

// startDaemon runs a Daemon for reg until stop or the end of the test.
func startDaemon(t testing.TB, rdb rueidis.Client, reg *worker.Registry, cfg worker.Config) *daemon {
	t.Helper()
	d, err := worker.NewDaemon(rdb, reg, cfg)
	if err != nil {
		t.Fatalf("NewDaemon: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rd := &daemon{Daemon: d, cancel: cancel, done: make(chan error, 1)}
	go func() { rd.done <- d.Run(ctx) }()
	t.Cleanup(func() {
		if !rd.stopped {
			if err := rd.stop(t, 15*time.Second); err != nil {
				t.Errorf("Daemon.Run: %v", err)
			}
		}
	})
	return rd
}

// stop cancels Run's context and returns Run's result, failing the test when
// Run takes longer than within to return.
func (d *daemon) stop(t testing.TB, within time.Duration) error {
	t.Helper()
	d.stopped = true
	d.cancel()
	select {
	case err := <-d.done:
		return err
	case <-time.After(within):
		t.Fatalf("Daemon.Run did not return within %s of its context ending", within)
		return nil
	}
}

// register adds a handler to a new or given registry and fails on an error.
func register(t testing.TB, reg *worker.Registry, queue string, h worker.Handler, opts worker.QueueOptions) *worker.Registry {
	t.Helper()
	if reg == nil {
		reg = worker.NewRegistry()
	}
	if err := reg.Register(queue, h, opts); err != nil {
		t.Fatalf("Register(%q): %v", queue, err)
	}
	return reg
}
