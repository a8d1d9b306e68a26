package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// readBody reads the whole body, refusing more than limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int) ([]byte, *Error) {
	tooLarge := apiError(wire.CodeTooLarge, "body", fmt.Sprintf("the body is larger than %d bytes", limit))
	if r.ContentLength > int64(limit) {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(limit)))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		return nil, apiError(wire.CodeInvalidJSON, "body", "could not read the body: "+err.Error())
	}
	return body, nil
}

// checkBody refuses an empty body and one that is not UTF-8 (whose strings
// encoding/json would silently alter).
func checkBody(body []byte) *Error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apiError(wire.CodeInvalidJSON, "body", "the body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return apiError(wire.CodeInvalidJSON, "body", "the body is not valid UTF-8")
	}
	return nil
}

// fieldName is how a message names the member key of the object at
// prefix; an empty key shows as "".
func fieldName(prefix, key string) string {
	if key == "" {
		key = `""`
	}
	return prefix + key
}

// decodeObject decodes data, which must hold exactly one JSON value, with
// read; anything after the value is refused.
func decodeObject(data []byte, read func(dec *json.Decoder) *Error) *Error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := read(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return apiError(wire.CodeInvalidJSON, "body", "unexpected data after the JSON object")
	}
	return nil
}

// readObject reads one JSON object from dec and hands each member to
// member, which reads its value from dec. Keys match exactly
// (encoding/json would match "ID" to "id"), and a key given twice is
// refused. prefix ("", "jobs[3].") starts field names in messages.
func readObject(dec *json.Decoder, prefix string, member func(key string, dec *json.Decoder) *Error) *Error {
	return readNamedObject(dec, prefix, func(key string) string { return fieldName(prefix, key) }, member)
}

// readNamedObject is readObject with name naming a member in the message
// of a key given twice (a header's is headers["x"]); prefix still names
// the object itself when it is not one.
func readNamedObject(dec *json.Decoder, prefix string, name func(key string) string, member func(key string, dec *json.Decoder) *Error) *Error {
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(err)
	}
	if tok != json.Delim('{') {
		if prefix == "" {
			return apiError(wire.CodeInvalidJSON, "body", "the body must be a JSON object")
		}
		return invalidField(prefix[:len(prefix)-1], "must be a JSON object")
	}
	seen := make(map[string]struct{}) // a map: an object may hold many keys (headers)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(err)
		}
		key, _ := tok.(string) // object keys are strings
		if _, dup := seen[key]; dup {
			return invalidField(name(key), "appears twice")
		}
		seen[key] = struct{}{}
		if err := member(key, dec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return syntaxError(err)
	}
	return nil
}

// rawMember adapts a member function of raw values to readObject.
func rawMember(f func(key string, raw json.RawMessage) *Error) func(string, *json.Decoder) *Error {
	return func(key string, dec *json.Decoder) *Error {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return syntaxError(err)
		}
		return f(key, raw)
	}
}

// syntaxError describes malformed JSON, which spoils the whole body.
func syntaxError(err error) *Error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return apiError(wire.CodeInvalidJSON, "body", fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return apiError(wire.CodeInvalidJSON, "body", "malformed JSON: unexpected end")
	}
	return apiError(wire.CodeInvalidJSON, "body", "malformed JSON: "+err.Error())
}

// invalidField reports a bad value as worker.ValidationError words it:
// "invalid <field>: <reason>".
func invalidField(field, reason string) *Error {
	return apiError(wire.CodeInvalidField, field, "invalid "+field+": "+reason)
}

func unknownField(field, known string) *Error {
	return apiError(wire.CodeUnknownField, field, "unknown field "+field+" (known: "+known+")")
}

// fieldError turns a worker validation error into one naming field.
func fieldError(field string, err error) *Error {
	var ve *worker.ValidationError
	if errors.As(err, &ve) {
		return invalidField(field, ve.Reason)
	}
	return invalidField(field, err.Error())
}

func isNull(raw json.RawMessage) bool { return string(raw) == "null" }

func stringField(field string, raw json.RawMessage) (string, *Error) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", invalidField(field, "must be a string, not "+kind(raw))
	}
	return s, nil
}

// idField reads a string that follows the job id rules (an id, a unique
// key).
func idField(field string, raw json.RawMessage) (string, *Error) {
	s, err := stringField(field, raw)
	if err != nil {
		return "", err
	}
	if err := worker.ValidateID(s); err != nil {
		return "", fieldError(field, err)
	}
	return s, nil
}

func durationField(field string, raw json.RawMessage) (time.Duration, *Error) {
	if len(raw) == 0 || raw[0] != '"' {
		return 0, invalidField(field, `must be a duration string such as "90s" or "1h30m", not `+kind(raw))
	}
	s, err := stringField(field, raw)
	if err != nil {
		return 0, err
	}
	d, parseErr := time.ParseDuration(s)
	if parseErr != nil {
		return 0, invalidField(field, fmt.Sprintf(`%q is not a duration such as "90s" or "1h30m"`, s))
	}
	return d, nil
}

func boolField(field string, raw json.RawMessage) (bool, *Error) {
	switch string(raw) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, invalidField(field, "must be true or false, not "+kind(raw))
}

func intField(field string, raw json.RawMessage) (int, *Error) {
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) {
		return 0, invalidField(field, "must be a whole number, not "+kind(raw))
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return 0, invalidField(field, fmt.Sprintf("%s is out of range", raw))
		}
		return 0, invalidField(field, fmt.Sprintf("must be a whole number (got %s)", raw))
	}
	return n, nil
}

// kind names the JSON type of a raw value for messages.
func kind(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// parseTime reads an RFC 3339 time, from 1970 on.
func parseTime(field, s string) (time.Time, *Error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	switch {
	case err != nil:
		return time.Time{}, invalidField(field, fmt.Sprintf("%q is not an RFC 3339 time such as 2026-11-21T18:00:00Z", s))
	case t.UnixMilli() < 0:
		return time.Time{}, invalidField(field, fmt.Sprintf("%s is before 1970", t.Format(time.RFC3339)))
	}
	return t, nil
}

// diedRange reads the died_after and died_before of a dead-job filter
// (prefix starts their names); "" is no bound.
func diedRange(prefix, after, before string) (from, to time.Time, err *Error) {
	if after != "" {
		if from, err = parseTime(prefix+"died_after", after); err != nil {
			return from, to, err
		}
	}
	if before != "" {
		if to, err = parseTime(prefix+"died_before", before); err != nil {
			return from, to, err
		}
	}
	if !from.IsZero() && !to.IsZero() && !to.After(from) {
		return from, to, invalidField(prefix+"died_before", fmt.Sprintf("must be after %sdied_after (got %s and %s)", prefix, before, after))
	}
	return from, to, nil
}
