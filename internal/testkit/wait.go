package testkit

import (
	"testing"
	"time"
)

// pollEvery is how often the waits below look again.
const pollEvery = 5 * time.Millisecond

// WaitUntil calls cond every few milliseconds until it holds, within
// passes or the test's context ends, and reports whether it held. Use it on
// the real clock; tests on a fake clock (testing/synctest) wait with
// synctest.Wait instead.
func WaitUntil(t testing.TB, within time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-t.Context().Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// Eventually waits like WaitUntil and fails the test, naming what it waited
// for, when cond still does not hold after within.
func Eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	if !WaitUntil(t, within, cond) {
		t.Fatalf("waited %s for %s", within, what)
	}
}

// EventuallyState waits like Eventually for a cond that also says where
// things stand; the failure quotes its last word.
func EventuallyState(t testing.TB, within time.Duration, cond func() (ok bool, state string)) {
	t.Helper()
	var state string
	if !WaitUntil(t, within, func() bool {
		var ok bool
		ok, state = cond()
		return ok
	}) {
		t.Fatalf("gave up after %s: %s", within, state)
	}
}
