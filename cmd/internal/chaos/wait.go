package chaos

import (
	"context"
	"fmt"
	"time"
)

// pause waits for d or until ctx ends, whichever is first, and reports
// whether the whole wait passed.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// until calls cond every interval until it reports true, returns an error,
// or timeout passes; what names the wait in the timeout's error.
func until(ctx context.Context, timeout, every time.Duration, what string, cond func(context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var last error
	for {
		ok, err := cond(ctx)
		if ok {
			return nil
		}
		if err != nil {
			last = err
		}
		if !pause(ctx, every) {
			if last != nil {
				return fmt.Errorf("%s: not within %s: %w", what, timeout, last)
			}
			return fmt.Errorf("%s: not within %s", what, timeout)
		}
	}
}
