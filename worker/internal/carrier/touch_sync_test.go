package carrier

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestTouchReady walks the renewal-round wait on a fake clock: ready only
// once calls have got through for the grace, and a failed or slow call
// starts the wait again.
func TestTouchReady(t *testing.T) {
	const grace = 4 * time.Second
	quick := func() error { return nil }
	slow := func() error { time.Sleep(grace/4 + time.Millisecond); return nil }
	failing := func() error { return errors.New("connection refused") }
	synctest.Test(t, func(t *testing.T) {
		probes := 0
		counted := func(probe func() error) func() error {
			return func() error { probes++; return probe() }
		}
		tc := touch{since: time.Now(), grace: grace}
		step := func(want bool, probe func() error, what string) {
			t.Helper()
			if got := tc.ready(counted(probe)); got != want {
				t.Fatalf("%s: ready = %v, want %v", what, got, want)
			}
		}

		step(false, quick, "at the start of the term")
		time.Sleep(grace - time.Second)
		step(false, quick, "a second before the grace ends")
		time.Sleep(time.Second)
		step(true, quick, "once the grace has passed")
		before := probes
		step(true, failing, "while in touch")
		if probes != before {
			t.Fatal("a leader in touch probed Redis: want no call but the duty's own")
		}

		tc.since = time.Time{} // a duty call failed
		step(false, failing, "while Redis is away")
		step(false, quick, "at the first answer after the outage")
		time.Sleep(grace - time.Second)
		step(false, quick, "a second before the grace after the outage")
		step(false, failing, "a failed probe within the grace")
		step(false, quick, "the answer after it")
		time.Sleep(grace)
		step(true, quick, "a grace after that answer")

		tc.since = time.Time{}
		step(false, quick, "the first answer after another outage")
		time.Sleep(grace / 2)
		step(false, slow, "a probe that waited for Redis")
		time.Sleep(grace / 2)
		step(false, quick, "a grace after the first answer, but not after the slow one")
		time.Sleep(grace / 2)
		step(true, quick, "a grace after the slow probe's end")

		zero := touch{since: time.Now()}
		if !zero.ready(failing) {
			t.Fatal("no grace: want ready at once")
		}
	})
}
