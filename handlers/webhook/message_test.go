package webhook

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

func TestClean(t *testing.T) {
	t.Parallel()
	var red redactor
	red.addSecret("Bearer tok-0123456789")
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "webhook POST https://x/y: 503 Service Unavailable", "webhook POST https://x/y: 503 Service Unavailable"},
		{"line breaks and tabs", "a\r\nb\tc", "a  b c"},
		{"escape sequences", "\x1b]0;pwned\x07\x1b[31mred", `\x1b]0;pwned\x07\x1b[31mred`},
		{"NUL and DEL", "a\x00b\x7fc", `a\x00b\x7fc`},
		{"C1 controls", "a\u0085b\u009bc", `a\u0085b\u009bc`},
		{"bidi overrides", "evil\u202egnp.exe\u2066x\u2069", `evil\u202egnp.exe\u2066x\u2069`},
		{"zero-width and BOM", "a\u200bb\ufeffc", `a\u200bb\ufeffc`},
		{"line separators and odd spaces", "a\u2028b\u2029c\u00a0d", "a b c d"},
		{"invalid UTF-8", "a\xffb", "a\uFFFDb"},
		{"printable non-ASCII", "café → 東京", "café → 東京"},
		{"redacted", "got tok-0123456789 and TOK-0123456789", "got [redacted] and [redacted]"},
		{"a secret split by a control character stays split", "tok-01234\x0056789", `tok-01234\x0056789`},
		{"a secret joined by a line break is blanked", "Bearer\ntok-0123456789", "Bearer [redacted]"},
		{"cut", strings.Repeat("x", 2000), strings.Repeat("x", messageMax-len(" …")) + " …"},
		{"cut at a character", strings.Repeat("é", 600), strings.Repeat("é", (messageMax-len(" …"))/2) + " …"},
		{"escapes count towards the bound", strings.Repeat("\x1b", 600), strings.Repeat(`\x1b`, (messageMax-len(" …"))/4) + " …"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := clean(tt.in, red)
			if got != tt.want {
				t.Errorf("clean(%q) = %q; want %q", tt.in, got, tt.want)
			}
			if len(got) > messageMax {
				t.Errorf("clean(%q) is %d bytes; want at most %d", tt.in, len(got), messageMax)
			}
		})
	}
}

// seal cleans the message at every level the worker may read it, and keeps
// the causes for errors.Is and errors.As.
func TestSealKeepsCauses(t *testing.T) {
	t.Parallel()
	c := &config{}
	c.redact.addKey("the-signing-key")
	dirty := "x\x1b[2Jthe-signing-key"
	const want = `x\x1b[2J[redacted]`

	t.Run("permanent", func(t *testing.T) {
		t.Parallel()
		err := c.seal(worker.Permanent(fmt.Errorf("webhook POST u: %s", dirty)), nil)
		var perm *worker.PermanentError
		if !errors.As(err, &perm) {
			t.Fatalf("seal = %v; want a *worker.PermanentError", err)
		}
		if got := perm.Err.Error(); got != "webhook POST u: "+want {
			t.Errorf("the permanent error's cause = %q; want it clean", got)
		}
		if got := err.Error(); got != "permanent: webhook POST u: "+want {
			t.Errorf("seal = %q; want it clean", got)
		}
	})
	t.Run("context cause", func(t *testing.T) {
		t.Parallel()
		err := c.seal(fmt.Errorf("webhook POST %s: %w", dirty, worker.ErrShutdown), nil)
		if !errors.Is(err, worker.ErrShutdown) {
			t.Errorf("seal = %v; want it to wrap worker.ErrShutdown", err)
		}
		if !errors.Is(c.seal(fmt.Errorf("x: %w", context.DeadlineExceeded), nil), context.DeadlineExceeded) {
			t.Error("seal lost context.DeadlineExceeded")
		}
		if got := err.Error(); got != "webhook POST "+want+": "+worker.ErrShutdown.Error() {
			t.Errorf("seal = %q; want it clean", got)
		}
	})
	t.Run("snooze", func(t *testing.T) {
		t.Parallel()
		var sn *worker.SnoozeError
		if err := c.seal(worker.Snooze(time.Minute), nil); !errors.As(err, &sn) || sn.Delay != time.Minute {
			t.Errorf("seal = %v; want a *worker.SnoozeError of 1m", err)
		}
	})
	t.Run("nil", func(t *testing.T) {
		t.Parallel()
		if err := c.seal(nil, nil); err != nil {
			t.Errorf("seal(nil) = %v; want nil", err)
		}
	})
}
