package api

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/seed-53d105c9/courier/worker"
)

// Limits bound what one request may carry. Zero fields take defaults.
type Limits struct {
	// MaxPayloadBytes is the largest payload, after decoding (base64) or
	// compacting (JSON). Default worker.MaxPayloadBytesDefault; keep it
	// equal to the backend's worker.Config.MaxPayloadBytes.
	MaxPayloadBytes int
	// MaxScheduleAhead bounds delay and run_at. Default
	// worker.MaxScheduleAheadDefault; keep it equal to the backend's.
	MaxScheduleAhead time.Duration
	// MaxBatch is the most jobs of a batch request, 1 to MaxBatchLimit.
	// Default MaxBatchLimit.
	MaxBatch int
	// MaxBodyBytes bounds a batch request's body (a single job's body is
	// bounded by its payload limit: SingleBodyBytes). Default 16 MiB.
	MaxBodyBytes int
}

// Bounds of a request.
const (
	// MaxBatchLimit is the largest Limits.MaxBatch: a batch is one script
	// call, and a script call holds at most 1,000 jobs.
	MaxBatchLimit = 1000
	// MaxAttemptsLimit is the largest max_attempts a job may ask for.
	MaxAttemptsLimit = 1000
	// MaxTimeout is the longest timeout a job may ask for.
	MaxTimeout = 7 * 24 * time.Hour
	// MaxBodyBytesDefault is the default of Limits.MaxBodyBytes.
	MaxBodyBytesDefault = 16 << 20
	// envelopeBytes is what a single job's body may hold beyond its
	// payload: the other fields and white space.
	envelopeBytes = 64 << 10
)

func (l Limits) withDefaults() (Limits, error) {
	l.MaxPayloadBytes = cmp.Or(l.MaxPayloadBytes, worker.MaxPayloadBytesDefault)
	l.MaxScheduleAhead = cmp.Or(l.MaxScheduleAhead, worker.MaxScheduleAheadDefault)
	l.MaxBatch = cmp.Or(l.MaxBatch, MaxBatchLimit)
	l.MaxBodyBytes = cmp.Or(l.MaxBodyBytes, MaxBodyBytesDefault)
	switch {
	case l.MaxPayloadBytes < 0 || l.MaxPayloadBytes > worker.MaxPayloadBytesLimit:
		return l, fmt.Errorf("api: MaxPayloadBytes %d out of range", l.MaxPayloadBytes)
	case l.MaxScheduleAhead < 0:
		return l, errors.New("api: negative MaxScheduleAhead")
	case l.MaxBatch < 1 || l.MaxBatch > MaxBatchLimit:
		return l, fmt.Errorf("api: MaxBatch must be 1 to %d (got %d)", MaxBatchLimit, l.MaxBatch)
	case l.MaxBodyBytes < 0:
		return l, errors.New("api: negative MaxBodyBytes")
	}
	return l, nil
}

// SingleBodyBytes is the largest body of a single enqueue: a payload at
// the limit in base64, plus the envelope.
func (l Limits) SingleBodyBytes() int {
	return base64.StdEncoding.EncodedLen(l.MaxPayloadBytes) + envelopeBytes
}

// BatchBodyBytes is the largest body of a batch: MaxBodyBytes, but never
// less than what one job may need.
func (l Limits) BatchBodyBytes() int { return max(l.MaxBodyBytes, l.SingleBodyBytes()) }

// readBody reads the whole body, refusing more than limit bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int) ([]byte, *Error) {
	tooLarge := apiError(CodeTooLarge, "body", fmt.Sprintf("the body is larger than %d bytes", limit))
	if r.ContentLength > int64(limit) {
		return nil, tooLarge
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(limit)))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge
		}
		return nil, apiError(CodeInvalidJSON, "body", "could not read the body: "+err.Error())
	}
	return body, nil
}

// decodeJob decodes a single enqueue's body into a spec (without Queue).
func decodeJob(body []byte, l Limits, now time.Time) (worker.JobSpec, *Error) {
	if err := checkBody(body); err != nil {
		return worker.JobSpec{}, err
	}
	var spec worker.JobSpec
	err := decodeObject(body, func(dec *json.Decoder) *Error {
		var err *Error
		spec, err = readJob(dec, "", l, now)
		return err
	})
	return spec, err
}

// decodeBatch decodes a batch's body, {"jobs": [...]}, into specs (without
// Queue). One bad job refuses the whole batch, naming it: "jobs[3].delay".
func decodeBatch(body []byte, l Limits, now time.Time) ([]worker.JobSpec, *Error) {
	if err := checkBody(body); err != nil {
		return nil, err
	}
	var specs []worker.JobSpec
	err := decodeObject(body, func(dec *json.Decoder) *Error {
		return readObject(dec, "", func(key string, dec *json.Decoder) *Error {
			if key != "jobs" {
				return unknownField(fieldName("", key), "jobs")
			}
			tok, err := dec.Token()
			switch {
			case err != nil:
				return syntaxError(err)
			case tok == nil:
				return nil // null: as if left out
			case tok != json.Delim('['):
				return invalidField("jobs", "must be a list of jobs")
			}
			// The jobs are decoded as they stream in: one pass over the
			// body, and no more than the limit of them.
			for dec.More() {
				if len(specs) == l.MaxBatch {
					return apiError(CodeTooLarge, "jobs", fmt.Sprintf("holds more than %d jobs, the limit per request", l.MaxBatch))
				}
				spec, err := readJob(dec, "jobs["+strconv.Itoa(len(specs))+"].", l, now)
				if err != nil {
					return err
				}
				specs = append(specs, spec)
			}
			if _, err := dec.Token(); err != nil { // the closing bracket
				return syntaxError(err)
			}
			return nil
		})
	})
	switch {
	case err != nil:
		return nil, err
	case len(specs) == 0:
		return nil, invalidField("jobs", fmt.Sprintf("must hold 1 to %d jobs", l.MaxBatch))
	}
	return specs, nil
}

// checkBody refuses an empty body and one that is not UTF-8 (whose strings
// encoding/json would silently alter).
func checkBody(body []byte) *Error {
	if len(bytes.TrimSpace(body)) == 0 {
		return apiError(CodeInvalidJSON, "body", "the body is empty; send a JSON object")
	}
	if !utf8.Valid(body) {
		return apiError(CodeInvalidJSON, "body", "the body is not valid UTF-8")
	}
	return nil
}

// jobFields are the fields of a job object, for unknown-field messages.
const jobFields = "id, payload, payload_base64, delay, run_at, max_attempts, timeout"

// readJob reads one job object from dec; prefix starts its field names.
func readJob(dec *json.Decoder, prefix string, l Limits, now time.Time) (worker.JobSpec, *Error) {
	var spec worker.JobSpec
	var hasPayload, hasBase64, hasRunAt bool
	err := readObject(dec, prefix, rawMember(func(key string, raw json.RawMessage) *Error {
		field := fieldName(prefix, key)
		if isNull(raw) && key != "payload" {
			// null is the same as leaving an optional field out.
			if !isJobField(key) {
				return unknownField(field, jobFields)
			}
			return nil
		}
		switch key {
		case "id":
			s, err := stringField(field, raw)
			if err != nil {
				return err
			}
			if err := worker.ValidateID(s); err != nil {
				return fieldError(field, err)
			}
			spec.ID = s
		case "payload":
			if isNull(raw) {
				return nil
			}
			p := []byte(raw) // a copy, valid JSON
			if bytes.ContainsAny(p, " \t\r\n") {
				var buf bytes.Buffer
				if err := json.Compact(&buf, raw); err != nil {
					return apiError(CodeInvalidJSON, field, "malformed JSON: "+err.Error())
				}
				p = buf.Bytes()
			}
			if len(p) > l.MaxPayloadBytes {
				return apiError(CodeTooLarge, field, fmt.Sprintf("is %d bytes as compact JSON; the limit is %d", len(p), l.MaxPayloadBytes))
			}
			spec.Payload, hasPayload = p, true
		case "payload_base64":
			s, err := stringField(field, raw)
			if err != nil {
				return err
			}
			if base64.StdEncoding.DecodedLen(len(s)) > l.MaxPayloadBytes+2 {
				return apiError(CodeTooLarge, field, fmt.Sprintf("decodes to more than %d bytes", l.MaxPayloadBytes))
			}
			p, decErr := base64.StdEncoding.Strict().DecodeString(s)
			if decErr != nil {
				return invalidField(field, "is not standard base64 (RFC 4648, with padding): "+decErr.Error())
			}
			if len(p) > l.MaxPayloadBytes {
				return apiError(CodeTooLarge, field, fmt.Sprintf("decodes to %d bytes; the limit is %d", len(p), l.MaxPayloadBytes))
			}
			spec.Payload, hasBase64 = p, true
		case "delay":
			d, err := durationField(field, raw)
			if err != nil {
				return err
			}
			switch {
			case d < 0:
				return invalidField(field, fmt.Sprintf("must not be negative (got %s)", d))
			case d > l.MaxScheduleAhead:
				return invalidField(field, fmt.Sprintf("%s is beyond the scheduling horizon of %s", d, l.MaxScheduleAhead))
			}
			spec.Delay = d
		case "run_at":
			s, err := stringField(field, raw)
			if err != nil {
				return err
			}
			t, parseErr := time.Parse(time.RFC3339Nano, s)
			switch {
			case parseErr != nil:
				return invalidField(field, fmt.Sprintf("%q is not an RFC 3339 time such as 2026-11-21T18:00:00Z", s))
			case t.UnixMilli() < 0:
				return invalidField(field, fmt.Sprintf("%s is before 1970", t.Format(time.RFC3339)))
			case t.After(now.Add(l.MaxScheduleAhead)):
				return invalidField(field, fmt.Sprintf("%s is beyond the scheduling horizon of %s", t.Format(time.RFC3339), l.MaxScheduleAhead))
			}
			spec.RunAt, hasRunAt = t, true
		case "max_attempts":
			n, err := intField(field, raw)
			if err != nil {
				return err
			}
			if n < 1 || n > MaxAttemptsLimit {
				return invalidField(field, fmt.Sprintf("must be 1 to %d, or left out for the queue's default (got %s)", MaxAttemptsLimit, raw))
			}
			spec.MaxAttempts = n
		case "timeout":
			d, err := durationField(field, raw)
			if err != nil {
				return err
			}
			if d < time.Millisecond || d > MaxTimeout {
				return invalidField(field, fmt.Sprintf("must be 1ms to %s, or left out for the queue's default (got %s)", MaxTimeout, d))
			}
			spec.Timeout = d
		default:
			return unknownField(field, jobFields)
		}
		return nil
	}))
	switch {
	case err != nil:
		return worker.JobSpec{}, err
	case hasPayload && hasBase64:
		return worker.JobSpec{}, invalidField(prefix+"payload_base64", "set payload or payload_base64, not both")
	case hasRunAt && spec.Delay != 0:
		return worker.JobSpec{}, invalidField(prefix+"run_at", "set delay or run_at, not both")
	}
	return spec, nil
}

// fieldName is how a message names the member key of the object at
// prefix; an empty key shows as "".
func fieldName(prefix, key string) string {
	if key == "" {
		key = `""`
	}
	return prefix + key
}

func isJobField(key string) bool {
	switch key {
	case "id", "payload", "payload_base64", "delay", "run_at", "max_attempts", "timeout":
		return true
	}
	return false
}

// decodeObject decodes data, which must hold exactly one JSON value, with
// read; anything after the value is refused.
func decodeObject(data []byte, read func(dec *json.Decoder) *Error) *Error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := read(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return apiError(CodeInvalidJSON, "body", "unexpected data after the JSON object")
	}
	return nil
}

// readObject reads one JSON object from dec and hands each member to
// member, which reads its value from dec. Keys match exactly
// (encoding/json would match "ID" to "id"), and a key given twice is
// refused. prefix ("", "jobs[3].") starts field names in messages.
func readObject(dec *json.Decoder, prefix string, member func(key string, dec *json.Decoder) *Error) *Error {
	tok, err := dec.Token()
	if err != nil {
		return syntaxError(err)
	}
	if tok != json.Delim('{') {
		if prefix == "" {
			return apiError(CodeInvalidJSON, "body", "the body must be a JSON object")
		}
		return invalidField(prefix[:len(prefix)-1], "must be a JSON object")
	}
	var seen []string // few keys: a list beats a map
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return syntaxError(err)
		}
		key, _ := tok.(string) // object keys are strings
		if slices.Contains(seen, key) {
			return invalidField(fieldName(prefix, key), "appears twice")
		}
		seen = append(seen, key)
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
		return apiError(CodeInvalidJSON, "body", fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return apiError(CodeInvalidJSON, "body", "malformed JSON: unexpected end")
	}
	return apiError(CodeInvalidJSON, "body", "malformed JSON: "+err.Error())
}

// invalidField reports a bad value as worker.ValidationError words it:
// "invalid <field>: <reason>".
func invalidField(field, reason string) *Error {
	return apiError(CodeInvalidField, field, "invalid "+field+": "+reason)
}

func unknownField(field, known string) *Error {
	return apiError(CodeUnknownField, field, "unknown field "+field+" (known: "+known+")")
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

// deadQuery reads ?cursor=&limit= of GET /v1/queues/{queue}/dead.
func deadQuery(rawQuery string) (worker.DeadQuery, *Error) {
	var q worker.DeadQuery
	values, err := parseQuery(rawQuery)
	if err != nil {
		return q, err
	}
	for key, vs := range values {
		if len(vs) > 1 {
			return q, invalidField(key, "appears more than once")
		}
		v := vs[0]
		switch key {
		case "cursor":
			q.Cursor = v
		case "limit":
			n, convErr := strconv.Atoi(v)
			if convErr != nil || n < 1 || n > worker.DeadLimitMax {
				return q, invalidField(key, fmt.Sprintf("must be a whole number from 1 to %d (got %q)", worker.DeadLimitMax, v))
			}
			q.Limit = n
		default:
			return q, apiError(CodeUnknownField, key, "unknown query parameter "+key+" (known: cursor, limit)")
		}
	}
	return q, nil
}

func parseQuery(raw string) (url.Values, *Error) {
	values, err := url.ParseQuery(raw)
	if err != nil {
		return nil, invalidField("query", "malformed query string: "+err.Error())
	}
	return values, nil
}

// noQuery refuses query parameters on a route that takes none.
func noQuery(rawQuery string) *Error {
	if rawQuery == "" {
		return nil
	}
	values, err := parseQuery(rawQuery)
	if err != nil {
		return err
	}
	for _, key := range slices.Sorted(maps.Keys(values)) {
		return apiError(CodeUnknownField, key, "unknown query parameter "+key+" (this route takes none)")
	}
	return nil
}
