package api

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

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
// The batch's durability, if any, is that of its jobs without their own.
func decodeBatch(body []byte, l Limits, now time.Time) ([]worker.JobSpec, *Error) {
	if err := checkBody(body); err != nil {
		return nil, err
	}
	var specs []worker.JobSpec
	var durability worker.Durability
	err := decodeObject(body, func(dec *json.Decoder) *Error {
		return readObject(dec, "", func(key string, dec *json.Decoder) *Error {
			if key == "durability" {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return syntaxError(err)
				}
				if isNull(raw) {
					return nil
				}
				var err *Error
				durability, err = readDurability(key, raw, l)
				return err
			}
			if key != "jobs" {
				return unknownField(fieldName("", key), "jobs, durability")
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
					return apiError(wire.CodeTooLarge, "jobs", fmt.Sprintf("holds more than %d jobs, the limit per request", l.MaxBatch))
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
	for i := range specs {
		if specs[i].Durability == (worker.Durability{}) {
			specs[i].Durability = durability
		}
	}
	return specs, nil
}

// jobFields are the fields of a job object, for unknown-field messages.
const jobFields = "id, payload, payload_base64, delay, run_at, max_attempts, timeout, priority, unique_key, unique_for, unique_after_finish, durability, headers"

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
			s, err := idField(field, raw)
			if err != nil {
				return err
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
					return apiError(wire.CodeInvalidJSON, field, "malformed JSON: "+err.Error())
				}
				p = buf.Bytes()
			}
			if len(p) > l.MaxPayloadBytes {
				return apiError(wire.CodeTooLarge, field, fmt.Sprintf("is %d bytes as compact JSON; the limit is %d", len(p), l.MaxPayloadBytes))
			}
			spec.Payload, hasPayload = p, true
		case "payload_base64":
			s, err := stringField(field, raw)
			if err != nil {
				return err
			}
			if base64.StdEncoding.DecodedLen(len(s)) > l.MaxPayloadBytes+2 {
				return apiError(wire.CodeTooLarge, field, fmt.Sprintf("decodes to more than %d bytes", l.MaxPayloadBytes))
			}
			p, decErr := base64.StdEncoding.Strict().DecodeString(s)
			if decErr != nil {
				return invalidField(field, "is not standard base64 (RFC 4648, with padding): "+decErr.Error())
			}
			if len(p) > l.MaxPayloadBytes {
				return apiError(wire.CodeTooLarge, field, fmt.Sprintf("decodes to %d bytes; the limit is %d", len(p), l.MaxPayloadBytes))
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
			t, err := parseTime(field, s)
			switch {
			case err != nil:
				return err
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
		case "priority":
			s, err := stringField(field, raw)
			if err != nil {
				return err
			}
			p, perr := worker.ParsePriority(s)
			if perr != nil {
				return fieldError(field, perr)
			}
			spec.Priority = p
		case "unique_key":
			// Checked here as id is: the library would take "" for no key,
			// which a producer who sent one did not mean.
			s, err := idField(field, raw)
			if err != nil {
				return err
			}
			spec.UniqueKey = s
		case "unique_for":
			d, err := durationField(field, raw)
			if err != nil {
				return err
			}
			// Worded as the library words it, so that the CLI fails alike
			// through the API.
			switch {
			case d < 0:
				return invalidField(field, fmt.Sprintf("must not be negative (got %s)", d))
			case d > worker.MaxUniqueFor:
				return invalidField(field, fmt.Sprintf("%s is over the limit of %s", d, worker.MaxUniqueFor))
			case d < time.Millisecond:
				return invalidField(field, fmt.Sprintf("must be at least 1ms (got %s)", d))
			}
			spec.UniqueFor = d
		case "unique_after_finish":
			b, err := boolField(field, raw)
			if err != nil {
				return err
			}
			spec.UniqueAfterFinish = b
		case "durability":
			d, err := readDurability(field, raw, l)
			if err != nil {
				return err
			}
			spec.Durability = d
		case "headers":
			h, err := readHeaders(field, raw)
			if err != nil {
				return err
			}
			spec.Headers = h
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
	// The library checks these too, but words them in Go names.
	case spec.UniqueFor != 0 && spec.UniqueKey == "":
		return worker.JobSpec{}, invalidField(prefix+"unique_for", "needs a unique_key")
	case spec.UniqueAfterFinish && spec.UniqueFor == 0:
		return worker.JobSpec{}, invalidField(prefix+"unique_after_finish", "needs a unique_for window")
	}
	return spec, nil
}
func isJobField(key string) bool {
	switch key {
	case "id", "payload", "payload_base64", "delay", "run_at", "max_attempts", "timeout",
		"priority", "unique_key", "unique_for", "unique_after_finish", "durability", "headers":
		return true
	}
	return false
}
