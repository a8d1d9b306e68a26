package chaos

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPauseAndUntil(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if pause(ctx, time.Hour) {
		t.Error("pause on an ended context reports a full wait")
	}
	n := 0
	err := until(t.Context(), 5*time.Second, time.Millisecond, "third call", func(context.Context) (bool, error) {
		n++
		return n == 3, nil
	})
	if err != nil || n != 3 {
		t.Errorf("until: %v after %d calls", err, n)
	}
	err = until(t.Context(), 20*time.Millisecond, time.Millisecond, "never", func(context.Context) (bool, error) {
		return false, errors.New("not yet")
	})
	if err == nil || err.Error() != "never: not within 20ms: not yet" {
		t.Errorf("until's timeout error = %v", err)
	}
}
