package testkit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
)

func TestPollUntil(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{})
	close(closed)
	for _, tc := range []struct {
		name    string
		poll    testkit.Poll
		cond    func(looks int) bool
		wantErr func(error) bool
	}{
		{"holds at once", testkit.Poll{}, func(int) bool { return true }, isNil},
		{"holds later", testkit.Poll{Every: time.Millisecond}, func(n int) bool { return n == 3 }, isNil},
		{"never holds", testkit.Poll{}, func(int) bool { return false }, func(err error) bool { return err != nil && !errors.Is(err, testkit.ErrStopped) }},
		{"stopped", testkit.Poll{Stop: closed}, func(int) bool { return false }, func(err error) bool { return errors.Is(err, testkit.ErrStopped) }},
		{"holds at the last look after the stop", testkit.Poll{Stop: closed}, func(n int) bool { return n == 2 }, isNil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			looks := 0
			err := tc.poll.Until(t, 50*time.Millisecond, func() bool {
				looks++
				return tc.cond(looks)
			})
			if !tc.wantErr(err) {
				t.Errorf("Until = %v after %d looks", err, looks)
			}
		})
	}
}

func isNil(err error) bool { return err == nil }
