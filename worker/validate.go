package worker

import (
	"unicode"
	"unicode/utf8"
)

// Limits on names.
const (
	MaxQueueNameLen = 128
	MaxIDLen        = 256
)

// ValidateQueueName checks a queue name: 1 to 128 characters from
// [A-Za-z0-9._-]. Braces, colons, spaces and control characters are refused,
// so a name can never forge another key or hash tag.
func ValidateQueueName(name string) error {
	if name == "" {
		return invalid("Queue", "name is empty")
	}
	if len(name) > MaxQueueNameLen {
		return invalid("Queue", "name is %d characters long; the limit is %d", len(name), MaxQueueNameLen)
	}
	for i := 0; i < len(name); i++ {
		if !isNameChar(name[i]) {
			r, _ := utf8.DecodeRuneInString(name[i:])
			return invalid("Queue", "name %q has %q at byte %d; allowed are A-Z a-z 0-9 . _ -", name, r, i)
		}
	}
	return nil
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// ValidateID checks a job id: 1 to 256 bytes of printable UTF-8 without
// whitespace or control characters. Ids are never part of a key name.
func ValidateID(id string) error {
	if id == "" {
		return invalid("ID", "is empty")
	}
	if len(id) > MaxIDLen {
		return invalid("ID", "is %d bytes long; the limit is %d", len(id), MaxIDLen)
	}
	if !utf8.ValidString(id) {
		return invalid("ID", "%q is not valid UTF-8", id)
	}
	for i, r := range id {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return invalid("ID", "%q has %q at byte %d; whitespace and control characters are not allowed", id, r, i)
		}
	}
	return nil
}

// validateText checks a short text a job carries (a header's value, a
// progress message): at most limit bytes of valid UTF-8 without control
// characters. subject begins the reason ("value " for a header's), so the
// error reads: invalid Headers["x"]: value is not valid UTF-8.
func validateText(field, subject, s string, limit int) error {
	if len(s) > limit {
		return invalid(field, "%sis %d bytes long; the limit is %d", subject, len(s), limit)
	}
	if !utf8.ValidString(s) {
		return invalid(field, "%sis not valid UTF-8", subject)
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return invalid(field, "%shas %q at byte %d; control characters are not allowed", subject, r, i)
		}
	}
	return nil
}

// validatePrefix checks a key prefix: like a queue name, but ':' is allowed
// so prefixes can be namespaced ("app:courier").
func validatePrefix(p string) error {
	if p == "" || len(p) > MaxQueueNameLen {
		return invalid("Prefix", "must be 1 to %d characters", MaxQueueNameLen)
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; !isNameChar(c) && c != ':' {
			r, _ := utf8.DecodeRuneInString(p[i:])
			return invalid("Prefix", "%q has %q at byte %d; allowed are A-Z a-z 0-9 . _ - :", p, r, i)
		}
	}
	return nil
}
