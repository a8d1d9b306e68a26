package store

import (
	"errors"
	"maps"
	"slices"
	"strings"
)

// EncodeHeaders is the headers section of a c4 record: "name=value\n" per
// header, by name; "" for none. Names never hold '=' and values never hold
// a control character (the worker package validates both), so the section
// reads back unambiguously.
func EncodeHeaders(h map[string]string) string {
	if len(h) == 0 {
		return ""
	}
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(h)) {
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(h[name])
		b.WriteByte('\n')
	}
	return b.String()
}

// errBadHeaders reports a headers section that does not decode.
var errBadHeaders = errors.New("bad headers section")

// DecodeHeaders is the inverse of EncodeHeaders.
func DecodeHeaders(s string) (map[string]string, error) {
	h := make(map[string]string, strings.Count(s, "\n"))
	for s != "" {
		line, rest, ok := strings.Cut(s, "\n")
		name, value, eq := strings.Cut(line, "=")
		if !ok || !eq || name == "" {
			return nil, errBadHeaders
		}
		h[name] = value
		s = rest
	}
	return h, nil
}
