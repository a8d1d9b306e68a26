package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// A Daemon runs once at a time, in one of two ways: Run blocks until its
// context ends and the drain is over; Start runs it in the background
// until Stop (or Start's context ending). The states:
//
//	idle ──Run──► by Run ──Run returns──► idle
//	idle ──Start──► started ──Stop, or Start's ctx ends──► stopped (final)
//
// Misuse is an error that says so, never a panic: Run or Start while
// either runs, Start after Stop, Stop before Start or of a Daemon Run
// runs. Stop again after Stop returns the same as the first.

// lifeState is where a Daemon is in its lifecycle.
type lifeState int

const (
	lifeIdle    lifeState = iota
	lifeRun               // Run is running it
	lifeStarted           // Start started it; Stop has not returned
	lifeStopped           // Start started it, and it ended
)

// errStopped is the cause of the run's context when Stop ends it.
var errStopped = errors.New("worker: Daemon.Stop called")

// lifecycle holds the state of a Daemon and its current or last run.
type lifecycle struct {
	mu    sync.Mutex
	state lifeState
	run   *runOf // nil before the first
}

// runOf is one run of a Daemon.
type runOf struct {
	cancel  context.CancelCauseFunc // ends the run's context
	hurry   chan struct{}           // closed: the drain ends now (Stop's ctx ended)
	hurried sync.Once
	up      chan struct{} // closed once the pool runs, or the start waits for Redis
	upOnce  sync.Once
	done    chan struct{} // closed when the run returned, err set
	err     error
}

// started closes up, once.
func (r *runOf) started() { r.upOnce.Do(func() { close(r.up) }) }

// waiting is the start wait's notify: the first error the start waits
// out means the Daemon is started, in the background.
func (l *lifecycle) waiting(reason error) {
	l.mu.Lock()
	r := l.run
	l.mu.Unlock()
	if reason != nil && r != nil {
		r.started()
	}
}

// begin moves the Daemon from idle to state and runs it in the background
// on ctx.
func (d *Daemon) begin(ctx context.Context, state lifeState, caller string) (*runOf, error) {
	l := &d.life
	l.mu.Lock()
	defer l.mu.Unlock()
	switch l.state {
	case lifeRun:
		return nil, fmt.Errorf("worker: Daemon.%s called while Run runs the Daemon", caller)
	case lifeStarted:
		return nil, fmt.Errorf("worker: Daemon.%s called while Start's run goes on; call Stop first", caller)
	case lifeStopped:
		return nil, fmt.Errorf("worker: Daemon.%s called after Stop; a started Daemon runs once: make another with NewDaemon", caller)
	}
	runCtx, cancel := context.WithCancelCause(ctx)
	r := &runOf{cancel: cancel, hurry: make(chan struct{}), up: make(chan struct{}), done: make(chan struct{})}
	l.state, l.run = state, r
	go func() {
		err := d.run(runCtx, r.hurry, r.started)
		cancel(nil)
		l.mu.Lock()
		r.err = err
		if l.state == lifeRun {
			l.state = lifeIdle // Run may run it again
		}
		l.mu.Unlock()
		close(r.done)
	}()
	return r, nil
}

// result is what run r returned, once done is closed.
func (d *Daemon) result(r *runOf) error {
	d.life.mu.Lock()
	defer d.life.mu.Unlock()
	return r.err
}

// Run works until ctx ends, then stops claiming, lets running jobs finish up
// to Config.ShutdownTimeout, cancels the rest (their context's cause is
// ErrShutdown) and puts them back due without spending an attempt, writes
// the last acks, and returns nil. Nothing claimed is lost: if the process
// dies instead, the jobs' leases expire and the queue's leader recovers
// them.
//
// Before its pool starts, Run waits while Redis is unavailable, as Dial
// does, logging the wait every 5 s (Waiting says why). It returns an error
// only when it cannot start: an error waiting cannot fix, or ctx ended.
//
// Alongside the pool, Run stands for the leadership of each of its queues
// (package worker/lock) and, while it leads one, recovers expired leases,
// trims the dead set, samples the queue's sizes and fires its periodic
// jobs. When ctx ends it releases its leaderships at once, so that another
// process takes over within milliseconds, while the pool drains.
func (d *Daemon) Run(ctx context.Context) error {
	r, err := d.begin(ctx, lifeRun, "Run")
	if err != nil {
		return err
	}
	<-r.done
	return d.result(r)
}

// Start runs the Daemon in the background, as Run does, until Stop is
// called or ctx ends; either begins Run's drain. It returns once the pool
// runs or, while Redis is unavailable, once the start waits for it (within
// about a second: the start carries on in the background, see Waiting).
// An error that waiting cannot fix is returned, as Run returns it; one met
// later is logged and returned by Stop. A program that serves jobs and
// enqueues calls Start, then Stop when it shuts down.
func (d *Daemon) Start(ctx context.Context) error {
	r, err := d.begin(ctx, lifeStarted, "Start")
	if err != nil {
		return err
	}
	select {
	case <-r.up:
		go d.logLateError(r)
		return nil
	case <-r.done:
		return d.result(r)
	}
}

// logLateError logs the error that ends a run after Start returned: Stop
// returns it too, but only when the program stops.
func (d *Daemon) logLateError(r *runOf) {
	<-r.done
	if err := d.result(r); err != nil && !errors.Is(err, errStopped) {
		d.cfg.Logger.Error("worker daemon stopped", "err", err)
	}
}

// Stop ends what Start started, draining as Run does when its context
// ends: running jobs get Config.ShutdownTimeout, the rest go back due and
// nothing is lost. It returns when the drain is over, or, when ctx ends
// first, stops hard at once as Run does at the timeout (jobs still running
// are cancelled and put back due, which takes up to about a second more).
// It returns the error the Daemon stopped on, if any: nil after a drain,
// and nil for a Daemon still waiting for Redis. Stop before Start is an
// error; Stop again returns what the first returned.
func (d *Daemon) Stop(ctx context.Context) error {
	l := &d.life
	l.mu.Lock()
	state, r := l.state, l.run
	l.mu.Unlock()
	switch state {
	case lifeIdle:
		return errors.New("worker: Daemon.Stop called before Start")
	case lifeRun:
		return errors.New("worker: Daemon.Stop called on a Daemon that Run runs; end Run's context instead")
	}
	r.cancel(errStopped)
	select {
	case <-r.done:
	case <-ctx.Done():
		r.hurried.Do(func() { close(r.hurry) })
		<-r.done
	}
	l.mu.Lock()
	l.state = lifeStopped
	l.mu.Unlock()
	if err := d.result(r); !errors.Is(err, errStopped) {
		return err
	}
	return nil
}

// Running reports whether the pool runs and claims jobs; it turns false
// once the drain is over.
func (d *Daemon) Running() bool { return d.working.Load() }

// Drained returns what the last run (Run, or Start and Stop) did while
// stopping, once it returned.
func (d *Daemon) Drained() (DrainSummary, bool) {
	s := d.summary.Load()
	if s == nil {
		return DrainSummary{}, false
	}
	return *s, true
}
