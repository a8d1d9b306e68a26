package limiter_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/internal/testkit"
	"github.com/seed-53d105c9/courier/worker/limiter"
)

// TestBadInputIsRefusedAndWritesNothing: every bad argument is an error
// wrapping ErrInvalid that names the argument and what is wrong, and no
// key is written.
func TestBadInputIsRefusedAndWritesNothing(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	prefix := testkit.Prefix(t)
	l := newLimiter(t, rdb, limiter.Options{Prefix: prefix})
	ctx := t.Context() // the parent's: it lives until its parallel subtests end
	const sec = time.Second
	acquire := func(name string, max int, lease time.Duration) func() error {
		return func() error { _, err := l.Acquire(ctx, name, max, lease); return err }
	}
	try := func(name string, max int, lease time.Duration) func() error {
		return func() error { _, _, err := l.TryAcquire(ctx, name, max, lease); return err }
	}
	take := func(name string, n int, per time.Duration, k int) func() error {
		return func() error { _, _, err := l.TakeN(ctx, name, n, per, k); return err }
	}
	wait := func(name string, n int, per time.Duration) func() error {
		return func() error { return l.Wait(ctx, name, n, per) }
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string // in the message
	}{
		{"empty name", acquire("", 1, sec), "invalid name: is empty"},
		{"name with a brace", acquire("a{b", 1, sec), `invalid name "a{b": has '{' at byte 1`},
		{"name with a closing brace", try("a}b", 1, sec), `invalid name "a}b": has '}' at byte 1`},
		{"name with a space", take("a b", 1, sec, 1), `invalid name "a b": has ' ' at byte 1`},
		{"name too long", wait(strings.Repeat("n", limiter.MaxNameLen+1), 1, sec), "invalid name: is 129 bytes long; the limit is 128"},
		{"max 0", acquire("api", 0, sec), "invalid max: must be 1 to 1000000 (got 0)"},
		{"max negative", try("api", -3, sec), "invalid max: must be 1 to 1000000 (got -3)"},
		{"max too large", acquire("api", limiter.MaxLimit+1, sec), "invalid max: must be 1 to 1000000 (got 1000001)"},
		{"lease 0", acquire("api", 1, 0), "invalid lease: must be 30ms to 8784h0m0s (got 0s)"},
		{"lease negative", try("api", 1, -sec), "invalid lease: must be 30ms to 8784h0m0s (got -1s)"},
		{"lease below the minimum", acquire("api", 1, 10*time.Millisecond), "invalid lease: must be 30ms to 8784h0m0s (got 10ms)"},
		{"n 0", take("api", 0, sec, 1), "invalid n: must be 1 to 1000000 (got 0)"},
		{"n negative", wait("api", -1, sec), "invalid n: must be 1 to 1000000 (got -1)"},
		{"per 0", take("api", 1, 0, 1), "invalid per: must be 1ms to 8784h0m0s (got 0s)"},
		{"per negative", wait("api", 1, -sec), "invalid per: must be 1ms to 8784h0m0s (got -1s)"},
		{"per below a millisecond", take("api", 1, time.Microsecond, 1), "invalid per: must be 1ms to 8784h0m0s (got 1µs)"},
		{"k 0", take("api", 5, sec, 0), "invalid k: must be 1 to n = 5 (got 0)"},
		{"k above n", take("api", 5, sec, 6), "invalid k: must be 1 to n = 5 (got 6)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.call()
			if !errors.Is(err, limiter.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want ErrInvalid saying %q", err, tc.want)
			}
			// Every call under the prefix is refused: none may leave a key.
			keys, err := rdb.Do(t.Context(), rdb.B().Keys().Pattern(prefix+"*").Build()).AsStrSlice()
			if err != nil || len(keys) > 0 {
				t.Errorf("keys written by refused calls: %v, %v", keys, err)
			}
		})
	}
}

// TestNewRefusesBadOptions: New names the option that is wrong.
func TestNewRefusesBadOptions(t *testing.T) {
	t.Parallel()
	rdb := testkit.Single(t)
	for _, tc := range []struct {
		opts limiter.Options
		want string
	}{
		{limiter.Options{Prefix: "app{x}"}, `invalid Options.Prefix: "app{x}" has '{' at byte 3`},
		{limiter.Options{Prefix: "a/b"}, `invalid Options.Prefix: "a/b" has '/' at byte 1`},
		{limiter.Options{Prefix: strings.Repeat("p", 129)}, "invalid Options.Prefix: must be 1 to 128 characters"},
		{limiter.Options{ID: "web 1"}, `invalid Options.ID: "web 1" has ' ' at byte 3`},
	} {
		if _, err := limiter.New(rdb, tc.opts); !errors.Is(err, limiter.ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want ErrInvalid saying %q", tc.opts, err, tc.want)
		}
	}
	if _, err := limiter.New(nil, limiter.Options{}); err == nil {
		t.Error("New(nil) succeeded")
	}
	l := newLimiter(t, rdb, limiter.Options{Prefix: "app:courier"})
	if id := l.ID(); id == "" || strings.ContainsAny(id, " \t\n") {
		t.Errorf("default ID %q", id)
	}
}
