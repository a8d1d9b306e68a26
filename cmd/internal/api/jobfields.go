package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// jobMember is a member of a job object: its name, and how its JSON value
// (not null) becomes the field of a worker.JobSpec it sets. field names it
// in messages ("jobs[3].delay").
type jobMember struct {
	name string
	read func(spec *worker.JobSpec, field string, raw json.RawMessage, l Limits) *Error
}

// jobMembers are the members of a job object, in the order the messages
// list them. jsonFields (errors.go) maps the library's field names back.
var jobMembers = []jobMember{
	member("id", stringField, func(s *worker.JobSpec) *string { return &s.ID }, "a generated id"),
	member("kind", stringField, func(s *worker.JobSpec) *string { return &s.Kind }, "no kind"),
	member("key", stringField, func(s *worker.JobSpec) *string { return &s.Key }, "no key"),
	{"payload", readPayload},
	{"payload_base64", readPayloadBase64},
	member("delay", durationField, func(s *worker.JobSpec) *time.Duration { return &s.Delay }, ""),
	member("run_at", timeField, func(s *worker.JobSpec) *time.Time { return &s.RunAt }, ""),
	member("max_attempts", intField, func(s *worker.JobSpec) *int { return &s.MaxAttempts }, "the queue's default"),
	member("timeout", durationField, func(s *worker.JobSpec) *time.Duration { return &s.Timeout }, "the queue's default"),
	member("priority", priorityField, func(s *worker.JobSpec) *worker.Priority { return &s.Priority }, ""),
	member("unique_key", stringField, func(s *worker.JobSpec) *string { return &s.UniqueKey }, "no unique key"),
	member("unique_for", durationField, func(s *worker.JobSpec) *time.Duration { return &s.UniqueFor }, "a key held until the job finishes"),
	member("unique_after_finish", boolField, func(s *worker.JobSpec) *bool { return &s.UniqueAfterFinish }, ""),
	{"durability", func(s *worker.JobSpec, field string, raw json.RawMessage, l Limits) (err *Error) {
		s.Durability, err = readDurability(field, raw, l)
		return err
	}},
	{"headers", func(s *worker.JobSpec, field string, raw json.RawMessage, _ Limits) (err *Error) {
		s.Headers, err = readHeaders(field, raw)
		return err
	}},
}

// jobFields lists the members of a job object, for unknown-field
// messages.
var jobFields = func() string {
	names := make([]string, len(jobMembers))
	for i, m := range jobMembers {
		names[i] = m.name
	}
	return strings.Join(names, ", ")
}()

// member is the jobMember name that parse reads into the field to returns.
// With zero set, the field's zero value, which the library reads as a
// field left out (zero says what that means: "the queue's default"), is
// refused when given: a request that sends max_attempts 0 or an empty id
// meant something, and leaving the member out (or null) is how JSON asks
// for the default. The Go client has only the zero value for that.
func member[T comparable](name string, parse func(field string, raw json.RawMessage) (T, *Error), to func(*worker.JobSpec) *T, zero string) jobMember {
	return jobMember{name, func(spec *worker.JobSpec, field string, raw json.RawMessage, _ Limits) *Error {
		v, err := parse(field, raw)
		if err != nil {
			return err
		}
		var none T
		if zero != "" && v == none {
			return invalidField(field, fmt.Sprintf("%s is no value; leave %s out (or null) for %s", raw, name, zero))
		}
		*to(spec) = v
		return nil
	}}
}

// readPayload takes any JSON value as the payload, stored as compact JSON
// text (what the handler gets).
func readPayload(spec *worker.JobSpec, field string, raw json.RawMessage, _ Limits) *Error {
	p := []byte(raw) // a copy, valid JSON
	if bytes.ContainsAny(p, " \t\r\n") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, raw); err != nil {
			return apiError(wire.CodeInvalidJSON, field, "malformed JSON: "+err.Error())
		}
		p = buf.Bytes()
	}
	spec.Payload = p
	return nil
}

// readPayloadBase64 takes the payload as standard base64, for bytes that
// are not JSON.
func readPayloadBase64(spec *worker.JobSpec, field string, raw json.RawMessage, _ Limits) *Error {
	s, err := stringField(field, raw)
	if err != nil {
		return err
	}
	p, decErr := base64.StdEncoding.Strict().DecodeString(s)
	if decErr != nil {
		return invalidField(field, "is not standard base64 (RFC 4648, with padding): "+decErr.Error())
	}
	spec.Payload = p
	return nil
}

// timeField reads an RFC 3339 time; the library bounds it.
func timeField(field string, raw json.RawMessage) (time.Time, *Error) {
	s, err := stringField(field, raw)
	if err != nil {
		return time.Time{}, err
	}
	t, perr := time.Parse(time.RFC3339Nano, s)
	if perr != nil {
		return time.Time{}, invalidField(field, fmt.Sprintf("%q is not an RFC 3339 time such as 2026-11-21T18:00:00Z", s))
	}
	return t, nil
}

// priorityField reads a priority's name, as worker.ParsePriority does.
func priorityField(field string, raw json.RawMessage) (worker.Priority, *Error) {
	s, err := stringField(field, raw)
	if err != nil {
		return 0, err
	}
	p, perr := worker.ParsePriority(s)
	if perr != nil {
		return 0, fieldError(field, perr)
	}
	return p, nil
}
