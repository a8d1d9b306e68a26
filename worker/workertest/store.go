package workertest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Store is an in-memory Courier store of one test, for tests of code that
// enqueues jobs or runs them: the embedded store of NewRedis, a Client
// and an admin.Client on it, a Config with test timings, and a clock that
// moves only when the test moves it (Advance). Make one with New.
type Store struct {
	t      testing.TB
	rdb    rueidis.Client
	m      *miniredis.Miniredis
	cfg    worker.Config
	client *worker.Client
	admin  *admin.Client

	mu  sync.Mutex
	now time.Time // the store's clock
}

// New starts an in-memory store for the test and everything on it; it is
// closed at the test's end.
//
// The store's clock starts at the real time (to the millisecond) and then
// stands still: Now tells it, and only Advance moves it. Every time the
// scripts read (when a job is due, a retry's or a snooze's run-at, lease
// deadlines, key expiry) is this clock's, so a job enqueued with Delay d
// is due exactly at Now().Add(d), and becomes due when the test advances
// the clock past it. Timeouts of handlers' contexts, the Daemon's own
// timers and generated job ids use the real clock.
func New(t testing.TB) *Store {
	t.Helper()
	rdb, m := start(t)
	now := time.Now().Truncate(time.Millisecond)
	m.SetTime(now)
	s := &Store{t: t, rdb: rdb, m: m, now: now, cfg: testConfig(t)}
	var err error
	if s.client, err = worker.NewClient(rdb, s.cfg); err != nil {
		t.Fatalf("workertest: worker.NewClient: %v", err)
	}
	if s.admin, err = admin.NewClient(rdb, s.cfg); err != nil {
		t.Fatalf("workertest: admin.NewClient: %v", err)
	}
	return s
}

// testConfig is Store.Config: the defaults, but quick to notice due jobs,
// quick to stop, and logging warnings and errors to the test's output
// until the test's cleanup (a daemon's goroutine that logs after the test
// ended, such as a lock's late undo, then writes nowhere rather than race
// the test's end).
func testConfig(t testing.TB) worker.Config {
	return worker.Config{
		PollInterval:    25 * time.Millisecond,
		RecoverInterval: 100 * time.Millisecond,
		ShutdownTimeout: 5 * time.Second,
		Logger:          slog.New(slog.NewTextHandler(untilCleanup(t), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
}

// Redis returns the store's Redis client, for worker.NewClient,
// worker.NewDaemon or admin.NewClient with a Config of your own.
func (s *Store) Redis() rueidis.Client { return s.rdb }

// Config returns the Config the store's clients and daemons use: the
// defaults, except a safety poll of 25ms (a job the clock's Advance made
// due starts at once), a 5s shutdown timeout, and warnings and errors
// logged to the test's output. Change a copy for a client or daemon of
// your own.
func (s *Store) Config() worker.Config { return s.cfg }

// Client returns a worker.Client on the store, for the code under test
// to enqueue with.
func (s *Store) Client() *worker.Client { return s.client }

// Admin returns an admin.Client on the store, to list, count, cancel or
// triage jobs as an operator would.
func (s *Store) Admin() *admin.Client { return s.admin }

// Now returns the store's clock: the time the scripts read.
func (s *Store) Now() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// Advance moves the store's clock forward by d: jobs due by the new time
// (scheduled jobs, retries after their backoff, snoozed jobs) become
// ready, and keys with a time to live age by d. Advance while nothing
// runs (between Drain calls, or with no Daemon started): a running job's
// lease, on the store's clock, would lapse if d passes it. A negative d
// fails the test.
func (s *Store) Advance(d time.Duration) {
	s.t.Helper()
	if d < 0 {
		s.t.Fatalf("workertest: Advance(%s): the store's clock only moves forward", d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(d)
	s.m.SetTime(s.now)
	s.m.FastForward(d)
}

// Start runs a worker.Daemon with reg's handlers on the store until the
// test ends (it is stopped, and must stop cleanly, in the test's
// cleanup), for tests that enqueue and wait (worker.Client.WaitEmpty,
// Get). Drain, which returns when the work is done, suits most tests
// better.
func (s *Store) Start(t testing.TB, reg *worker.Registry) *worker.Daemon {
	t.Helper()
	d, err := worker.NewDaemon(s.rdb, reg, s.cfg)
	if err != nil {
		t.Fatalf("workertest: worker.NewDaemon: %v", err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(t.Context()))
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := waitRun(done, s.cfg.ShutdownTimeout); err != nil {
			t.Errorf("workertest: the Daemon started by Start: %v", err)
		}
	})
	return d
}

// waitRun returns what a Daemon's Run returned once its context ended
// (nil for a Run stopped before its pool started, which returns the
// context's error), or an error when it took more than the shutdown
// timeout and 5s.
func waitRun(done <-chan error, shutdown time.Duration) error {
	select {
	case err := <-done:
		if errors.Is(err, context.Canceled) {
			return nil
		}
		return err
	case <-time.After(shutdown + 5*time.Second):
		return errRunHung
	}
}

// errRunHung: a Daemon's Run did not return after its context ended.
var errRunHung = errors.New("run did not return within the shutdown timeout and 5s of its context ending")

// cutOff is a writer that goes to w until it is cut off, then nowhere.
type cutOff struct {
	mu sync.Mutex
	w  io.Writer
}

func (c *cutOff) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil {
		return len(p), nil
	}
	return c.w.Write(p)
}

// untilCleanup is t's output until t's cleanup.
func untilCleanup(t testing.TB) io.Writer {
	c := &cutOff{w: t.Output()}
	t.Cleanup(func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.w = nil
	})
	return c
}
