package testkit

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// The waits below run on the real clock; tests on a fake clock
// (testing/synctest) wait with synctest.Wait instead.

// PollEveryDefault is how often a wait looks again unless its Poll says
// otherwise.
const PollEveryDefault = 5 * time.Millisecond

// ErrStopped is what Poll.Until returns when Poll.Stop was closed before
// the condition held.
var ErrStopped = errors.New("stopped before the wait was over")

// Poll says how a wait looks at its condition. The zero Poll looks every
// PollEveryDefault until the condition holds, the wait's time is up or the
// test's context ends.
type Poll struct {
	// Every is the time between two looks; PollEveryDefault when zero.
	// Make it longer when a look costs, such as a request to another
	// process.
	Every time.Duration
	// Stop ends the wait when it is closed (a process that exited, a
	// daemon that stopped), after one last look; nil never does.
	Stop <-chan struct{}
}

// Until calls cond until it holds and returns nil, or returns why it gave
// up: within passed, ErrStopped, or the test's context ended.
func (p Poll) Until(t testing.TB, within time.Duration, cond func() bool) error {
	t.Helper()
	every := p.Every
	if every <= 0 {
		every = PollEveryDefault
	}
	deadline := time.Now().Add(within)
	tick := time.NewTicker(every)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", within)
		}
		select {
		case <-t.Context().Done():
			return fmt.Errorf("the test's context ended: %w", context.Cause(t.Context()))
		case <-p.Stop:
			if cond() {
				return nil
			}
			return ErrStopped
		case <-tick.C:
		}
	}
	return nil
}

// Eventually waits like Until and fails the test, naming what it waited
// for, when cond does not hold.
func (p Poll) Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if err := p.Until(t, within, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// EventuallyState waits like Eventually for a cond that also says where
// things stand; the failure quotes its last word.
func (p Poll) EventuallyState(t testing.TB, within time.Duration, cond func() (ok bool, state string)) {
	t.Helper()
	var state string
	if err := p.Until(t, within, func() bool {
		var ok bool
		ok, state = cond()
		return ok
	}); err != nil {
		t.Fatalf("%v: %s", err, state)
	}
}

// WaitUntil calls cond every PollEveryDefault until it holds, within passes
// or the test's context ends, and reports whether it held.
func WaitUntil(t testing.TB, within time.Duration, cond func() bool) bool {
	t.Helper()
	return Poll{}.Until(t, within, cond) == nil
}

// Eventually is Poll{}.Eventually: it fails the test when cond does not
// hold within the given time.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	Poll{}.Eventually(t, within, what, cond)
}

// EventuallyState is Poll{}.EventuallyState.
func EventuallyState(t testing.TB, within time.Duration, cond func() (ok bool, state string)) {
	t.Helper()
	Poll{}.EventuallyState(t, within, cond)
}
