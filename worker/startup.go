package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// A daemon or a client that starts while Redis is briefly unavailable (a
// restart, a failover, a Cluster that reports CLUSTERDOWN) waits for it
// instead of failing: under a supervisor a failed start becomes a crash
// loop whose own back-off grows exactly while Redis recovers. What waiting
// cannot fix (refused credentials, a TLS certificate, a bad option) still
// fails at once; IsRedisUnavailable decides which is which.
const (
	// startRetryMin is the first wait between two attempts; it doubles
	// from there.
	startRetryMin = 100 * time.Millisecond
	// startRetryMax caps the wait between two attempts, so that a start
	// completes within about a second of Redis answering again, however
	// long it was away: an attempt under way when Redis comes back may
	// take its whole startAttemptMin, and the wait after it up to this
	// (at 1 s the two together missed the chaos suite's 2 s by 30 ms
	// after a Cluster failover). An attempt is one connection or one
	// call: cheap for Redis even from a large fleet.
	startRetryMax = 500 * time.Millisecond
	// startLogEvery is how often a wait is logged: its first error at
	// once, then one record per startLogEvery however many attempts.
	startLogEvery = 5 * time.Second
	// startAttemptMin bounds an attempt's time. rueidis (and the script
	// layer) resend some calls by themselves until their context ends (a
	// Cluster's refused connections, CLUSTERDOWN), with delays that grow
	// the longer they go on: without a bound an attempt would wait out a
	// failover silently, the start could not say why it waits, and it
	// would notice Redis back a second late. After startAttemptPatience
	// attempts in a row ran out of time, the bound doubles with each
	// further one, up to startAttemptMax, so that a step that is merely
	// slow (a Redis far away or loaded) gets the time it needs.
	startAttemptMin      = time.Second
	startAttemptMax      = 16 * time.Second
	startAttemptPatience = 5
)

// startWait is one start's wait for Redis, shared by its steps (Dial's
// connection, or a Daemon's writes before its pool starts). Each wait
// (the failed attempts of one step) is logged when it begins, then once
// per startLogEvery, and when it ends. It is safe for concurrent use:
// Reason may be read while a step waits.
type startWait struct {
	log    *slog.Logger
	notify func(reason error) // when set, told each error waited out, and nil at the end

	mu       sync.Mutex
	reason   error     // what the last attempt failed with; nil when not waiting
	since    time.Time // when the current wait began
	attempts int       // its failed attempts
	logged   time.Time // when it was last logged
}

// Reason returns the error the start is waiting out, or nil when it is not
// waiting.
func (w *startWait) Reason() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.reason
}

// retryStart runs step until it succeeds, fails with an error waiting
// cannot fix (returned as it is), or ctx ends (the error then wraps ctx's
// and quotes the last one). what names the step in the logs. step must be
// safe to run again after it failed part way, as every start-up write is
// (they set a state; none adds to one). Each attempt has startAttemptMin
// (more after several ran out of it); attempts are startRetryMin
// apart, doubling up to startRetryMax, each wait drawn between half and
// all of that (so a fleet restarted at once does not retry in step).
func retryStart[T any](ctx context.Context, w *startWait, what string, step func(context.Context) (T, error)) (T, error) {
	delay, bound, timeouts := startRetryMin, startAttemptMin, 0
	for {
		v, err := attempt(ctx, bound, step)
		timeouts++
		if !errors.Is(err, errAttemptTimeout) {
			timeouts, bound = 0, startAttemptMin
		} else if timeouts >= startAttemptPatience {
			bound = min(2*bound, startAttemptMax)
		}
		switch {
		case err == nil:
			w.done(what)
			return v, nil
		case ctx.Err() != nil:
			w.done("")
			return v, fmt.Errorf("stopped while waiting for Redis (%v): %w", err, context.Cause(ctx))
		case !IsRedisUnavailable(err):
			w.done("")
			return v, err
		}
		w.failed(what, err)
		t := time.NewTimer(delay/2 + rand.N(delay/2+1)) // #nosec G404 -- jitter, not a secret
		select {
		case <-ctx.Done():
			t.Stop()
			w.done("")
			return v, fmt.Errorf("stopped while waiting for Redis (%v): %w", err, context.Cause(ctx))
		case <-t.C:
		}
		delay = min(2*delay, startRetryMax)
	}
}

// errAttemptTimeout marks an attempt that ran out of its time.
var errAttemptTimeout = errors.New("attempt timed out")

// attempt runs step with a deadline bound from now. When the deadline
// ended it, the error wraps errAttemptTimeout too, and keeps what step
// met on the way: rueidis returns the last error of a command it resent
// (CLUSTERDOWN, a refused connection), or the context's error alone.
func attempt[T any](ctx context.Context, bound time.Duration, step func(context.Context) (T, error)) (T, error) {
	actx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	v, err := step(actx)
	if err == nil || ctx.Err() != nil || actx.Err() == nil {
		return v, err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return v, fmt.Errorf("%w after %s: %w", errAttemptTimeout, bound, err)
	}
	return v, fmt.Errorf("%w (%w after %s)", err, errAttemptTimeout, bound)
}

// failed records an attempt of what that failed with err, and logs the
// wait when it begins and once per startLogEvery.
func (w *startWait) failed(what string, err error) {
	w.mu.Lock()
	now := time.Now()
	first := w.reason == nil
	if first {
		w.since, w.attempts = now, 0
	}
	w.reason = err
	w.attempts++
	attempts, waited := w.attempts, now.Sub(w.since)
	log := first || now.Sub(w.logged) >= startLogEvery
	if log {
		w.logged = now
	}
	w.mu.Unlock()
	if w.notify != nil {
		w.notify(err)
	}
	if !log {
		return
	}
	msg := "still waiting for Redis"
	if first {
		msg = "waiting for Redis"
	}
	w.log.Warn(msg, "step", what, "attempts", attempts, "waited", waited.Round(time.Millisecond),
		"retry_max", startRetryMax, "err", err)
}

// done ends the current wait; when the step (what, not "") succeeded
// after waiting, it logs how long it waited.
func (w *startWait) done(what string) {
	w.mu.Lock()
	waited, attempts, since := w.reason != nil, w.attempts, w.since
	w.reason = nil
	w.mu.Unlock()
	if w.notify != nil {
		w.notify(nil)
	}
	if waited && what != "" {
		w.log.Info("Redis answered", "step", what, "attempts", attempts+1, "waited", time.Since(since).Round(time.Millisecond))
	}
}

// Waiting returns the error Run or Start is waiting out before the pool
// starts (Redis unreachable, LOADING, CLUSTERDOWN, a failover: see Dial),
// or nil when it is not waiting. A readiness probe that finds Running false can
// say why with it.
func (d *Daemon) Waiting() error { return d.start.Reason() }

// DialOptions configure Dial. The zero value logs to slog.Default().
type DialOptions struct {
	// Logger receives the wait: its first error at once, then one record
	// every 5 s with the attempts so far and the last error, and one when
	// Redis answers. Default slog.Default().
	Logger *slog.Logger
	// Waiting, when set, is told each error Dial waits out, and nil once
	// it returns: a readiness probe can say why the process is not ready.
	Waiting func(reason error)
}

// Dial returns a client of the Redis that opt describes, as
// rueidis.NewClient does, but while Redis is unavailable (what
// IsRedisUnavailable lists: refused connections, LOADING, CLUSTERDOWN, a
// failover) it waits instead of failing, trying 100 ms apart, doubling up
// to 1 s. It returns at once an error that waiting cannot fix (credentials
// or a TLS certificate refused, a bad option), and one wrapping ctx's when
// ctx ends first. With Dial, and Daemon.Run waiting the same way for its
// first writes, a program starts whatever state Redis is in.
func Dial(ctx context.Context, opt rueidis.ClientOption, o DialOptions) (rueidis.Client, error) {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	w := &startWait{log: o.Logger.With("redis", strings.Join(opt.InitAddress, ",")), notify: o.Waiting}
	return retryStart(ctx, w, "connect", func(ctx context.Context) (rueidis.Client, error) {
		return newClient(ctx, opt)
	})
}

// newClient is rueidis.NewClient, which takes no context, given up when
// ctx ends first (a connection to an address that drops packets takes the
// dial timeout); a client made after that is closed.
func newClient(ctx context.Context, opt rueidis.ClientOption) (rueidis.Client, error) {
	type made struct {
		c   rueidis.Client
		err error
	}
	ch := make(chan made, 1)
	go func() {
		c, err := rueidis.NewClient(opt)
		ch <- made{c, err}
	}()
	select {
	case m := <-ch:
		return m.c, m.err
	case <-ctx.Done():
		go func() {
			if m := <-ch; m.c != nil {
				m.c.Close()
			}
		}()
		return nil, context.Cause(ctx)
	}
}
