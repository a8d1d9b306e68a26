package worker

import (
	"maps"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Limits on a job's headers (JobSpec.Headers).
const (
	MaxHeaders        = 32   // headers per job
	MaxHeaderNameLen  = 64   // bytes of a name
	MaxHeaderValueLen = 1024 // bytes of a value
	MaxHeadersSize    = 8192 // bytes of all names and values together
)

// headerNameAllowed names the characters of a header name, for errors.
const headerNameAllowed = "a-z 0-9 . _ -"

// validateHeaders checks a job's headers: at most MaxHeaders; names of 1
// to MaxHeaderNameLen bytes from a-z 0-9 . _ - (lower case, as HTTP/2 and
// W3C Trace Context write them); values of valid UTF-8 without control
// characters, at most MaxHeaderValueLen bytes; MaxHeadersSize bytes in all.
// The error names the header: Headers["x-y"].
func validateHeaders(h map[string]string) error {
	if len(h) > MaxHeaders {
		return invalid("Headers", "has %d headers; the limit is %d", len(h), MaxHeaders)
	}
	size := 0
	for _, name := range slices.Sorted(maps.Keys(h)) {
		field := "Headers[" + quoteName(name) + "]"
		if err := validateHeaderName(field, name); err != nil {
			return err
		}
		v := h[name]
		if err := validateText(field, "value ", v, MaxHeaderValueLen); err != nil {
			return err
		}
		size += len(name) + len(v)
	}
	if size > MaxHeadersSize {
		return invalid("Headers", "names and values are %d bytes in all; the limit is %d", size, MaxHeadersSize)
	}
	return nil
}

func validateHeaderName(field, name string) error {
	if name == "" {
		return invalid(field, "name is empty")
	}
	if len(name) > MaxHeaderNameLen {
		return invalid(field, "name is %d bytes long; the limit is %d", len(name), MaxHeaderNameLen)
	}
	for i := 0; i < len(name); i++ {
		if !isHeaderNameChar(name[i]) {
			r, _ := utf8.DecodeRuneInString(name[i:])
			return invalid(field, "name has %q at byte %d; allowed are %s", r, i, headerNameAllowed)
		}
	}
	return nil
}

// isHeaderNameChar reports whether c may be part of a header name.
func isHeaderNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// quoteName shows a header name in an error's field, quoted and cut to
// the name limit, so a hostile name cannot make the message unreadable.
func quoteName(name string) string {
	if len(name) > MaxHeaderNameLen {
		return strconv.Quote(name[:MaxHeaderNameLen]) + "…"
	}
	return strconv.Quote(name)
}
