package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// A job's JSON is decoded here for its shape only: types, unknown fields,
// keys given twice, members that exclude each other, values that are no
// value (below). Every rule of a job (bounds, ids, queue names, headers,
// durability) is the library's: the handler hands the spec to
// worker.Client.EnqueueMany, whose *worker.ValidationError jsonField
// names as the request wrote it, so that the Go client, courier enqueue
// and this API refuse the same jobs alike (cmd/courier/parity_test.go).

// decodeJob decodes a single enqueue's body into a spec (without Queue).
func decodeJob(body []byte, l Limits) (worker.JobSpec, *Error) {
	if err := checkBody(body); err != nil {
		return worker.JobSpec{}, err
	}
	var spec worker.JobSpec
	err := decodeObject(body, func(dec *json.Decoder) *Error {
		var err *Error
		spec, err = readJob(dec, "", l)
		return err
	})
	return spec, err
}

// decodeBatch decodes a batch's body, {"jobs": [...]}, into specs (without
// Queue). One bad job refuses the whole batch, naming it: "jobs[3].delay".
// The batch's durability, if any, is that of its jobs without their own;
// the library checks it here (worker.Durability.Validate), where its
// fields can be named as the request wrote them.
func decodeBatch(body []byte, l Limits) ([]worker.JobSpec, *Error) {
	if err := checkBody(body); err != nil {
		return nil, err
	}
	var specs []worker.JobSpec
	var durability worker.Durability
	err := decodeObject(body, func(dec *json.Decoder) *Error {
		return readObject(dec, "", func(key string, dec *json.Decoder) *Error {
			switch key {
			case "durability":
				return rawMember(func(key string, raw json.RawMessage) *Error {
					if isNull(raw) {
						return nil
					}
					var err *Error
					if durability, err = readDurability(key, raw, l); err != nil {
						return err
					}
					return durabilityError(key, durability.Validate())
				})(key, dec)
			case "jobs":
				var err *Error
				specs, err = readJobs(dec, l)
				return err
			}
			return unknownField(fieldName("", key), "jobs, durability")
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

// readJobs reads a batch's list of jobs as they stream in: one pass over
// the body, and no more than the limit of them. null is no list.
func readJobs(dec *json.Decoder, l Limits) ([]worker.JobSpec, *Error) {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, syntaxError(err)
	case tok == nil:
		return nil, nil // null: as if left out
	case tok != json.Delim('['):
		return nil, invalidField("jobs", "must be a list of jobs")
	}
	var specs []worker.JobSpec
	for dec.More() {
		if len(specs) == l.MaxBatch {
			return nil, apiError(wire.CodeTooLarge, "jobs", fmt.Sprintf("holds more than %d jobs, the limit per request", l.MaxBatch))
		}
		spec, err := readJob(dec, "jobs["+strconv.Itoa(len(specs))+"].", l)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	if _, err := dec.Token(); err != nil { // the closing bracket
		return nil, syntaxError(err)
	}
	return specs, nil
}

// durabilityError names the field of a worker.Durability's validation
// error under field ("durability"): durability.replicas.
func durabilityError(field string, err error) *Error {
	var ve *worker.ValidationError
	if !errors.As(err, &ve) {
		return nil
	}
	name := strings.TrimPrefix(jsonField("Durability."+ve.Field), "durability.")
	return invalidField(field+"."+name, ve.Reason)
}

// exclusive are the pairs of members a job may not hold both of, the
// second named in the refusal: shape, as the CLI's pairs of flags are.
var exclusive = [][2]string{{"payload", "payload_base64"}, {"delay", "run_at"}}

// readJob reads one job object from dec; prefix starts its field names.
// null is the same as leaving a member out.
func readJob(dec *json.Decoder, prefix string, l Limits) (worker.JobSpec, *Error) {
	var spec worker.JobSpec
	var given []string
	err := readObject(dec, prefix, rawMember(func(key string, raw json.RawMessage) *Error {
		field := fieldName(prefix, key)
		i := slices.IndexFunc(jobMembers, func(m jobMember) bool { return m.name == key })
		switch {
		case i < 0:
			return unknownField(field, jobFields)
		case isNull(raw):
			return nil
		}
		given = append(given, key)
		return jobMembers[i].read(&spec, field, raw, l)
	}))
	if err != nil {
		return worker.JobSpec{}, err
	}
	for _, pair := range exclusive {
		if slices.Contains(given, pair[0]) && slices.Contains(given, pair[1]) {
			return worker.JobSpec{}, invalidField(prefix+pair[1], fmt.Sprintf("set %s or %s, not both", pair[0], pair[1]))
		}
	}
	return spec, nil
}
