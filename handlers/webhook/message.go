package webhook

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker"
)

const (
	// messageMax bounds the message of an error the handler returns, in
	// bytes: it becomes the job's last_error, shown in terminals and logs.
	messageMax = 1 << 10
	// messageScanMax bounds the text redact scans, so that a huge message
	// (a certificate may name thousands of hosts) costs little. Anything
	// past it would be cut anyway.
	messageScanMax = 4 * messageMax
)

// cleanError is an error the handler returns: its message is safe to show,
// and it wraps the error it was made from, so that errors.Is and errors.As
// see the causes (worker.ErrShutdown, a *worker.SnoozeError, ...).
type cleanError struct {
	msg string
	err error
}

// Error implements error.
func (e *cleanError) Error() string { return e.msg }

// Unwrap returns the error the message was made from.
func (e *cleanError) Unwrap() error { return e.err }

// seal makes err, from a request to target (nil if none was made), safe to
// return: its message may hold text from the receiver or the network (a
// response body, a certificate's names, a Location header) and the secrets
// they echo. It is the one place every error of Handle passes through. A
// *worker.PermanentError is rebuilt around the cleaned error, so that the
// worker sees it and its message is clean at every level.
func (c *config) seal(err error, target *url.URL) error {
	if err == nil {
		return nil
	}
	red := c.redact
	if c.pathSecret && target != nil {
		red = red.with(target)
	}
	var p *worker.PermanentError
	if errors.As(err, &p) { // Handle marks the outermost error only
		return worker.Permanent(&cleanError{msg: clean(p.Err.Error(), red), err: p.Err})
	}
	return &cleanError{msg: clean(err.Error(), red), err: err}
}

// clean blanks secrets out of s, escapes its control characters and cuts it
// to messageMax bytes. Secrets are blanked both before escaping, which
// could split one, and after, which could join one.
func clean(s string, red redactor) string {
	s = cut(strings.ToValidUTF8(s, "\uFFFD"), messageScanMax, "")
	s = red.redact(escapeControls(red.redact(s)))
	return cut(s, messageMax, " …")
}

// escapeControls makes s safe for a terminal and one line long: line
// breaks, tabs and other spaces become a space; C0 and C1 controls, DEL,
// and format characters (bidirectional overrides, zero-width characters)
// and other unprintable runes become Go escapes such as \x1b and \u202e.
func escapeControls(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r != ' ' && !unicode.IsPrint(r) }) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == ' ' || unicode.IsPrint(r):
			b.WriteRune(r)
		case r == '\t' || r == '\n' || r == '\r' || unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp):
			b.WriteByte(' ')
		case r < utf8.RuneSelf:
			fmt.Fprintf(&b, `\x%02x`, r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
	}
	return b.String()
}

// cut shortens s to at most n bytes, never inside a character, and appends
// mark when it did.
func cut(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	n -= len(mark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + mark
}
