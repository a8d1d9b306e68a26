package worker

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker/internal/core"
)

// Limits on names.
const (
	MaxQueueNameLen = 128
	MaxIDLen        = 256
	MaxKindLen      = 128
)

// Limits on a job's own settings (JobSpec), the same for every producer:
// the Go Client, courier enqueue and the HTTP API.
const (
	// MaxAttemptsLimit is the largest JobSpec.MaxAttempts.
	MaxAttemptsLimit = 1000
	// TimeoutLimit is the longest JobSpec.Timeout.
	TimeoutLimit = 7 * 24 * time.Hour
)

// validateSpec checks a job against every rule of a job: the one place
// they are written. EnqueueMany calls it for each spec before it writes
// anything; courier enqueue and the HTTP API hand their jobs to
// EnqueueMany and only map the field of its *ValidationError to their
// own names. maxPayload and horizon are the Client's
// Config.MaxPayloadBytes and Config.MaxScheduleAhead.
func validateSpec(spec *JobSpec, maxPayload int, horizon time.Duration, now time.Time) error {
	if err := ValidateQueueName(spec.Queue); err != nil {
		return err
	}
	if spec.ID != "" {
		if err := ValidateID(spec.ID); err != nil {
			return err
		}
	}
	if err := validateSchedule(spec, maxPayload, horizon, now); err != nil {
		return err
	}
	if err := spec.Priority.validate(); err != nil {
		return err
	}
	if err := validateUnique(spec); err != nil {
		return err
	}
	if err := spec.Durability.validate("Durability"); err != nil {
		return err
	}
	for name := range spec.Headers {
		if strings.HasPrefix(name, core.ReservedHeaders) {
			return invalid("Headers["+quoteName(name)+"]", "names beginning with %q are Courier's own (a kind is JobSpec.Kind)", core.ReservedHeaders)
		}
	}
	if spec.Kind == "" {
		return validateHeaders(spec.Headers)
	}
	if err := ValidateKind(spec.Kind); err != nil {
		return err
	}
	// The kind travels as a header and counts against their limits.
	if err := validateHeaders(core.WithKind(spec.Headers, spec.Kind)); err != nil {
		return fmt.Errorf("with the kind's header %q: %w", core.KindHeader, err)
	}
	return nil
}

// validateSchedule checks a job's payload, when it runs and how often and
// how long it may.
func validateSchedule(spec *JobSpec, maxPayload int, horizon time.Duration, now time.Time) error {
	switch {
	case len(spec.Payload) > maxPayload:
		return invalid("Payload", "is %d bytes; the limit is %d", len(spec.Payload), maxPayload)
	case spec.Delay < 0:
		return invalid("Delay", "must not be negative (got %s)", spec.Delay)
	case spec.Delay > horizon:
		return invalid("Delay", "%s is beyond the scheduling horizon of %s", spec.Delay, horizon)
	case !spec.RunAt.IsZero() && spec.Delay != 0:
		return invalid("RunAt", "set delay or run_at, not both")
	case !spec.RunAt.IsZero() && spec.RunAt.UnixMilli() < 0:
		return invalid("RunAt", "%s is before 1970", spec.RunAt.Format(time.RFC3339))
	case spec.RunAt.After(now.Add(horizon)):
		return invalid("RunAt", "%s is beyond the scheduling horizon of %s", spec.RunAt.Format(time.RFC3339), horizon)
	case spec.MaxAttempts < 0 || spec.MaxAttempts > MaxAttemptsLimit:
		return invalid("MaxAttempts", "must be 1 to %d, or 0 for the queue's default (got %d)", MaxAttemptsLimit, spec.MaxAttempts)
	case spec.Timeout < 0 || spec.Timeout > TimeoutLimit || spec.Timeout > 0 && spec.Timeout < time.Millisecond:
		return invalid("Timeout", "must be 1ms to %s, or 0 for the queue's default (got %s)", TimeoutLimit, spec.Timeout)
	}
	return nil
}

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

// ValidateKind checks a job kind (JobSpec.Kind, a key of Kinds): 1 to
// MaxKindLen bytes of A-Z a-z 0-9 . _ - : / (asynq's task types fit).
func ValidateKind(kind string) error {
	if kind == "" {
		return invalid("Kind", "is empty")
	}
	if len(kind) > MaxKindLen {
		return invalid("Kind", "is %d bytes long; the limit is %d", len(kind), MaxKindLen)
	}
	for i := 0; i < len(kind); i++ {
		if c := kind[i]; !isNameChar(c) && c != ':' && c != '/' {
			r, _ := utf8.DecodeRuneInString(kind[i:])
			return invalid("Kind", "%q has %q at byte %d; allowed are A-Z a-z 0-9 . _ - : /", kind, r, i)
		}
	}
	return nil
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
}

// ValidateKey checks a job key (JobSpec.Key) by the rules of an id
// (ValidateID); a bad one is a *ValidationError of field Key. For code
// that names a key to look up or to limit (admin.Client.Key,
// SetKeyLimits, a CLI or a form), before it reaches Redis.
func ValidateKey(key string) error { return validateIDField("Key", key) }

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
