package limiter

import (
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of the arguments; the scripts check the same.
const (
	// MaxNameLen is the longest limit name, in bytes.
	MaxNameLen = 128
	// MaxLimit is the largest max (slots) and n (units per window).
	MaxLimit = 1_000_000
	// LeaseMin is the shortest slot lease: renewals every 10ms.
	LeaseMin = 30 * time.Millisecond
	// LeaseMax is the longest slot lease: 366 days (the scripts accept up
	// to 31622400000 ms).
	LeaseMax = 366 * 24 * time.Hour
	// PerMax is the longest window of a rate limit: 366 days, as LeaseMax.
	PerMax = 366 * 24 * time.Hour
)

// validateName checks a limit name: 1 to MaxNameLen bytes of A-Z a-z 0-9
// . _ - : / (the characters of a job kind). Braces are refused, so a name
// can never forge another key's hash tag.
func validateName(name string) error {
	if name == "" {
		return invalid("name: is empty")
	}
	if len(name) > MaxNameLen {
		return invalid("name: is %d bytes long; the limit is %d", len(name), MaxNameLen)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isNameChar(c) {
			r, _ := utf8.DecodeRuneInString(name[i:])
			return invalid("name %q: has %q at byte %d; allowed are A-Z a-z 0-9 . _ - : /", name, r, i)
		}
	}
	return nil
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-' || c == ':' || c == '/'
}

// validatePrefix checks a key prefix as package worker does (Config.Prefix):
// 1 to 128 bytes of A-Z a-z 0-9 . _ - :.
func validatePrefix(p string) error {
	if p == "" || len(p) > 128 {
		return invalid("Options.Prefix: must be 1 to 128 characters")
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !isNameChar(c) || c == '/' {
			r, _ := utf8.DecodeRuneInString(p[i:])
			return invalid("Options.Prefix: %q has %q at byte %d; allowed are A-Z a-z 0-9 . _ - :", p, r, i)
		}
	}
	return nil
}

// validateID checks Options.ID: 1 to 200 bytes of printable UTF-8 without
// whitespace.
func validateID(id string) error {
	if id == "" || len(id) > 200 {
		return invalid("Options.ID: must be 1 to 200 bytes")
	}
	if !utf8.ValidString(id) {
		return invalid("Options.ID: %q is not valid UTF-8", id)
	}
	for i, r := range id {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return invalid("Options.ID: %q has %q at byte %d; whitespace and control characters are not allowed", id, r, i)
		}
	}
	return nil
}

// validateMax checks the number of slots or of units per window (what
// names it).
func validateMax(what string, n int) error {
	if n < 1 || n > MaxLimit {
		return invalid("%s: must be 1 to %d (got %d)", what, MaxLimit, n)
	}
	return nil
}

// validateLease checks a slot's lease and returns it in whole
// milliseconds.
func validateLease(lease time.Duration) (time.Duration, error) {
	if lease < LeaseMin || lease > LeaseMax {
		return 0, invalid("lease: must be %v to %v (got %v)", LeaseMin, LeaseMax, lease)
	}
	return lease.Truncate(time.Millisecond), nil
}

// validateRate checks a rate limit's n, window and units taken at once,
// and returns the window in whole milliseconds.
func validateRate(n int, per time.Duration, k int) (time.Duration, error) {
	if err := validateMax("n", n); err != nil {
		return 0, err
	}
	if per < time.Millisecond || per > PerMax {
		return 0, invalid("per: must be 1ms to %v (got %v)", PerMax, per)
	}
	if k < 1 || k > n {
		return 0, invalid("k: must be 1 to n = %d (got %d)", n, k)
	}
	return per.Truncate(time.Millisecond), nil
}
