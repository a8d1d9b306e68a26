package webhook

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/seed-53d105c9/courier/worker"
)

const (
	// responseReadMax is how much of a response body is read: enough for
	// an error message, and a small body read to its end lets the
	// connection be reused.
	responseReadMax = 64 << 10
	// snippetMax is how much of a response body an error quotes, in bytes.
	snippetMax = 256
	// snoozeMax caps the delay a 429 response's Retry-After asks for.
	snoozeMax = 24 * time.Hour
)

// outcome turns a response to a POST to where into the handler's result:
// nil for 2xx; worker.KeyLimited for 429 with a valid Retry-After (a
// snooze for a job without a key), and for 503 with one when the job has
// a key (keyed); a retryable error for 408, 429 without it, 5xx and
// anything unexpected; a Permanent error for redirects and the other 4xx.
// body is the start of the response body; now is when the response came.
func (c *config) outcome(where string, resp *http.Response, body []byte, now time.Time, keyed bool) error {
	code := resp.StatusCode
	switch {
	case 200 <= code && code < 300:
		return nil
	case 300 <= code && code < 400:
		moved := ""
		if loc, err := resp.Location(); err == nil {
			moved = " (Location: " + c.display(loc) + ")"
		}
		return worker.Permanent(fmt.Errorf("webhook POST %s: %s: redirects are not followed%s", where, status(code), moved))
	}
	err := fmt.Errorf("webhook POST %s: %s%s", where, status(code), c.snippet(body))
	switch {
	case code == http.StatusTooManyRequests:
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), now); ok {
			return worker.KeyLimited(d) // a job without a key is snoozed
		}
		return err
	case code == http.StatusServiceUnavailable && keyed:
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), now); ok {
			return worker.KeyLimited(d)
		}
		return err
	case code == http.StatusRequestTimeout, 500 <= code:
		return err
	case 400 <= code:
		return worker.Permanent(err)
	}
	return err
}

// status renders a status code with its standard text, never the one the
// server sent.
func status(code int) string {
	if text := http.StatusText(code); text != "" {
		return strconv.Itoa(code) + " " + text
	}
	return strconv.Itoa(code)
}

// display renders u for a message: scheme, host and path, without the user
// information, query and fragment, which may hold credentials.
func display(u *url.URL) string {
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()
}

// display renders u for a message or a log as display does, but without
// the path when paths are credentials (Settings.PathSecret), and with the
// known secrets blanked.
func (c *config) display(u *url.URL) string {
	if c.pathSecret && u.Path != "" && u.Path != "/" {
		return c.redact.redact(u.Scheme + "://" + u.Host + "/" + redactedMark)
	}
	return c.redact.redact(display(u))
}

// retryAfter parses a Retry-After value, delay-seconds or an HTTP-date, as a
// delay from now, capped at snoozeMax; a date in the past gives 0.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if isDigits(v) {
		secs, err := strconv.ParseUint(v, 10, 64)
		if err != nil || secs > uint64(snoozeMax/time.Second) {
			return snoozeMax, true // only too large can fail on digits
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return min(max(t.Sub(now), 0), snoozeMax), true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// snippet renders the start of a response body for an error message, after
// ": ", or "" for an empty body. The known secrets are blanked, in case the
// server echoes them, before the body is cut, so that no part of one is
// left; whitespace and unprintable characters collapse into single spaces
// so that the message stays on one line.
func (c *config) snippet(body []byte) string {
	s := c.redact.redactBody(strings.ToValidUTF8(string(body), "\uFFFD"))
	s = strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)), " ")
	if s == "" {
		return ""
	}
	truncated := len(body) >= responseReadMax
	if len(s) > snippetMax {
		s, truncated = strings.TrimRight(cut(s, snippetMax, ""), " "), true
	}
	if truncated {
		s += " …"
	}
	return ": " + s
}
