package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// TestRetryStartWaits, on a fake clock: a step that fails with refused
// connections for 12 s is tried again 100 ms after the first failure,
// doubling to at most 1 s apart, succeeds within a second of Redis being
// back, and the wait is logged three times in all (when it began, at 5 s
// and 10 s) plus once when it ended; Reason says why meanwhile.
func TestRetryStartWaits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var logs bytes.Buffer
		var told []error
		w := &startWait{log: slog.New(slog.NewTextHandler(&logs, nil)), notify: func(err error) { told = append(told, err) }}
		start := time.Now()
		back := start.Add(12 * time.Second)
		var at []time.Duration
		refused := fmt.Errorf("dial tcp 127.0.0.1:6379: %w", syscall.ECONNREFUSED)
		v, err := retryStart(t.Context(), w, "connect", func(context.Context) (int, error) {
			at = append(at, time.Since(start))
			if time.Now().Before(back) {
				return 0, refused
			}
			return 42, nil
		})
		if v != 42 || err != nil {
			t.Fatalf("retryStart = %d, %v; want 42, nil", v, err)
		}
		if at[1] < startRetryMin/2 || at[1] > startRetryMin {
			t.Errorf("second attempt at %s, want within %s of the first", at[1], startRetryMin)
		}
		for i := 1; i < len(at); i++ {
			if gap := at[i] - at[i-1]; gap > startRetryMax {
				t.Errorf("attempts %d and %d are %s apart, more than %s", i, i+1, gap, startRetryMax)
			}
		}
		if late := at[len(at)-1] - 12*time.Second; late > startRetryMax {
			t.Errorf("succeeded %s after Redis was back, want within %s", late, startRetryMax)
		}
		out := logs.String()
		if n := strings.Count(out, `msg="waiting for Redis"`); n != 1 {
			t.Errorf("%d records of the wait's start, want 1:\n%s", n, out)
		}
		if n := strings.Count(out, `msg="still waiting for Redis"`); n != 2 {
			t.Errorf("%d records of the wait going on in 12 s, want 2 (one per 5 s, not one per attempt of %d):\n%s", n, len(at)-1, out)
		}
		if !strings.Contains(out, `msg="Redis answered" step=connect attempts=`+fmt.Sprint(len(at))) {
			t.Errorf("no record of the end of the wait after %d attempts:\n%s", len(at), out)
		}
		if len(told) != len(at) || !errors.Is(told[0], syscall.ECONNREFUSED) || told[len(told)-1] != nil {
			t.Errorf("told %v; want each error, then nil", told)
		}
		if w.Reason() != nil {
			t.Errorf("Reason() = %v after the wait, want nil", w.Reason())
		}
	})
}

// TestRetryStartFailsFast: an error a retry cannot fix is returned at once,
// after one attempt, as it is.
func TestRetryStartFailsFast(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &startWait{log: slog.New(slog.DiscardHandler)}
		refused := errors.New("WRONGPASS invalid username-password pair")
		attempts := 0
		_, err := retryStart(t.Context(), w, "connect", func(context.Context) (any, error) {
			attempts++
			return nil, refused
		})
		if err != refused || attempts != 1 { //nolint:errorlint // returned as it is
			t.Errorf("retryStart = %v after %d attempts; want %v after 1", err, attempts, refused)
		}
	})
}

// TestRetryStartStops: when ctx ends during a wait, retryStart returns at
// once an error that wraps ctx's and quotes the last error.
func TestRetryStartStops(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &startWait{log: slog.New(slog.DiscardHandler)}
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() {
			_, err := retryStart(ctx, w, "connect", func(context.Context) (any, error) {
				return nil, syscall.ECONNREFUSED
			})
			done <- err
		}()
		time.Sleep(3 * time.Second) //nolint:forbidigo // a synctest bubble: the sleep moves the fake clock into the wait
		if !errors.Is(w.Reason(), syscall.ECONNREFUSED) {
			t.Errorf("Reason() = %v while waiting, want the refused connection", w.Reason())
		}
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "connection refused") {
				t.Errorf("retryStart = %v; want it to wrap context.Canceled and quote the refused connection", err)
			}
		default:
			t.Fatal("retryStart did not return when its context ended")
		}
	})
}

// TestRetryStartBoundsAttempts, on a fake clock: an attempt that does not
// return by itself (rueidis resends some commands until their context
// ends) is given up after 1 s, five times, then after 2 s, 4 s...: the
// wait says why meanwhile (the last error the attempt met), and a step
// that is merely slow gets the time it needs.
func TestRetryStartBoundsAttempts(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		w := &startWait{log: slog.New(slog.DiscardHandler)}
		var took []time.Duration
		go func() {
			time.Sleep(1500 * time.Millisecond) //nolint:forbidigo // a synctest bubble: the sleep moves the fake clock into the wait
			if r := w.Reason(); !errors.Is(r, syscall.ECONNREFUSED) || !strings.Contains(fmt.Sprint(r), "attempt timed out after 1s") {
				t.Errorf("Reason() = %v during the second attempt; want the first's refused connection, timed out after 1s", r)
			}
		}()
		_, err := retryStart(t.Context(), w, "connect", func(ctx context.Context) (any, error) {
			start := time.Now()
			if len(took) == 7 { // slow, and answers within its 8 s
				time.Sleep(5 * time.Second) //nolint:forbidigo // a synctest bubble: the sleep moves the fake clock
				took = append(took, time.Since(start))
				return nil, nil
			}
			<-ctx.Done()
			took = append(took, time.Since(start))
			return nil, fmt.Errorf("dial: %w", syscall.ECONNREFUSED)
		})
		if err != nil {
			t.Fatalf("retryStart = %v", err)
		}
		want := []time.Duration{time.Second, time.Second, time.Second, time.Second, time.Second,
			2 * time.Second, 4 * time.Second, 5 * time.Second}
		if fmt.Sprint(took) != fmt.Sprint(want) {
			t.Errorf("attempts took %v; want %v", took, want)
		}
	})
}
