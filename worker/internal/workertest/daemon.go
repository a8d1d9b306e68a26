package workertest

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/seed-53d105c9/courier/worker"
)

// Daemon is a worker.Daemon running in the background of a test.
type Daemon struct {
	*worker.Daemon
	cancel  context.CancelFunc
	done    chan error
	stopped bool
}

// StartDaemon runs a Daemon for reg until Stop or the end of the test.
func StartDaemon(t testing.TB, rdb rueidis.Client, reg *worker.Registry, cfg worker.Config) *Daemon {
	t.Helper()
	d, err := worker.NewDaemon(rdb, reg, cfg)
	if err != nil {
		t.Fatalf("NewDaemon: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rd := &Daemon{Daemon: d, cancel: cancel, done: make(chan error, 1)}
	go func() { rd.done <- d.Run(ctx) }()
	t.Cleanup(func() {
		if !rd.stopped {
			if err := rd.Stop(t, 15*time.Second); err != nil {
				t.Errorf("Daemon.Run: %v", err)
			}
		}
	})
	return rd
}

// Cancel cancels Run's context, as SIGTERM does, without waiting for Run to
// return; Stop or the test's cleanup collects its result.
func (d *Daemon) Cancel() { d.cancel() }

// Exited reports whether Run has returned, and what it returned, without
// waiting; the result stays for Stop or the test's cleanup.
func (d *Daemon) Exited() (exited bool, err error) {
	select {
	case err := <-d.done:
		d.done <- err
		return true, err
	default:
		return false, nil
	}
}

// Stop cancels Run's context and returns Run's result, failing the test when
// Run takes longer than within to return.
func (d *Daemon) Stop(t testing.TB, within time.Duration) error {
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

// Register adds a handler to a new (reg nil) or given registry and fails on
// an error.
func Register(t testing.TB, reg *worker.Registry, queue string, h worker.Handler, opts worker.QueueOptions) *worker.Registry {
	t.Helper()
	if reg == nil {
		reg = worker.NewRegistry()
	}
	if err := reg.Register(queue, h, opts); err != nil {
		t.Fatalf("Register(%q): %v", queue, err)
	}
	return reg
}
