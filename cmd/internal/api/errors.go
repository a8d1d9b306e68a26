package api

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Error is an API error: on the server, what a route failed with; on the
// client, what the server answered. Its JSON is wire.Error's, the "error"
// member of an error response.
type Error struct {
	wireError

	retryAfter time.Duration // sent as Retry-After with 429 and 503
	cause      error         // what Unwrap returns: a worker sentinel, on the client side
}

// wireError lets Error embed wire.Error under a name that leaves Error
// free for the method of the error interface.
type wireError = wire.Error

// Error implements error.
func (e *Error) Error() string { return e.Message }

// ErrorCode returns e's code, for wire.CodeOf.
func (e *Error) ErrorCode() wire.Code { return e.Code }

// Unwrap returns the worker error the API error stands for, if any (the
// Client sets worker.ErrDuplicate, worker.ErrNotFound, ...), so that
// errors.Is works across the API as it does on a worker.Client.
func (e *Error) Unwrap() error { return e.cause }

func apiError(code wire.Code, field, message string) *Error {
	return &Error{wireError: wire.Error{Code: code, Field: field, Message: message}}
}

// errorOf maps an error of the backend to an API error. wire.CodeOf
// classifies it (the one mapping of the library's errors to codes, which
// the CLI shares); here each code gets its field and message: validation
// errors name their field as the request wrote it, Redis that cannot
// serve is a 503 with Retry-After, and the rest is internal (the caller
// logs it; the client sees no detail).
func errorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch code := wire.CodeOf(err); code {
	case wire.CodeInvalidField:
		var ve *worker.ValidationError
		errors.As(err, &ve)
		field := jsonField(ve.Field)
		return apiError(code, field, "invalid "+field+": "+ve.Reason)
	case wire.CodeNotFound:
		return apiError(code, "id", err.Error())
	case wire.CodeConflict:
		if errors.Is(err, admin.ErrQueueInUse) {
			return apiError(code, "queue", err.Error())
		}
		if errors.Is(err, worker.ErrJobDead) {
			// Only Cancel returns it: a dead job has nothing left to cancel.
			return apiError(code, "id", err.Error()+": there is nothing to cancel; requeue it or purge it through /dead/requeue or /dead/purge")
		}
		return apiError(code, "id", err.Error())
	case wire.CodeUnavailable:
		return unavailable(err)
	}
	return apiError(wire.CodeInternal, "", "internal error; the server logged it")
}

// How long a client is asked to wait (Retry-After) when Redis cannot
// serve a request.
const (
	// oomRetryAfter: Redis refused a write for lack of memory; long
	// enough for workers to drain some jobs.
	oomRetryAfter = 10 * time.Second
	// downRetryAfter: Redis could not be reached or cannot serve yet
	// (loading, busy, failing over); about what a restart takes.
	downRetryAfter = 2 * time.Second
	// timeoutRetryAfter: Redis did not answer before the request's
	// deadline, or the daemon has not reached Redis yet.
	timeoutRetryAfter = time.Second
)

// unavailableReason says for the log why Redis could not serve.
func unavailableReason(err error) string {
	switch {
	case errors.Is(err, worker.ErrRedisOOM):
		return "Redis is out of memory"
	case errors.Is(err, context.DeadlineExceeded):
		return "Redis is unavailable: it did not answer in time"
	}
	return "Redis is unavailable"
}

// unavailable is the 503 of an error wire.CodeOf calls unavailable. The
// message says why without the error's text, which may name Redis's
// address; the out-of-memory message is the library's, which the Client
// turns back into worker.ErrRedisOOM.
func unavailable(err error) *Error {
	var e *Error
	switch {
	case errors.Is(err, worker.ErrRedisOOM):
		e = apiError(wire.CodeUnavailable, "", err.Error())
		e.retryAfter = oomRetryAfter
	case errors.Is(err, context.DeadlineExceeded):
		e = apiError(wire.CodeUnavailable, "", "Redis did not answer within the API's write timeout; retry")
		e.retryAfter = timeoutRetryAfter
	default:
		e = apiError(wire.CodeUnavailable, "", "Redis is unavailable (not reachable, loading or failing over); retry")
		e.retryAfter = downRetryAfter
	}
	return e
}

// jsonFields maps the Go fields the worker library names in its validation
// errors (worker.ValidationError.Field) to this API's JSON names: the one
// table between the two vocabularies.
var jsonFields = map[string]string{
	"Queue":               "queue",
	"ID":                  "id",
	"Kind":                "kind",
	"Key":                 "key",
	"Payload":             "payload",
	"Delay":               "delay",
	"RunAt":               "run_at",
	"MaxAttempts":         "max_attempts",
	"Timeout":             "timeout",
	"Limit":               "limit",
	"Cursor":              "cursor",
	"Priority":            "priority",
	"UniqueKey":           "unique_key",
	"UniqueFor":           "unique_for",
	"UniqueAfterFinish":   "unique_after_finish",
	"Durability.Replicas": "durability.replicas",
	"Durability.Timeout":  "durability.timeout",
	"Durability.AOF":      "durability.aof",
	// GET /v1/queues/{queue}/jobs (admin.JobListParams)
	"State":              "state",
	"Dead.ErrorContains": "error",
	"Dead.DiedAfter":     "died_after",
	"Dead.DiedBefore":    "died_before",
	// requeue and purge (admin.TriageParams)
	"IDs":                  "ids",
	"Filter":               "filter",
	"Filter.ErrorContains": "filter.error",
	"Filter.DiedAfter":     "filter.died_after",
	"Filter.DiedBefore":    "filter.died_before",
	"Max":                  "max",
	// worker.JobSpec.Headers: Headers["x"] is headers["x"]
	"Headers": "headers",
	// a job key's limits (admin.KeyLimits)
	"Concurrency": "concurrency",
	"Weight":      "weight",
	"RateLimit":   "rate_limit",
}

// jsonField names a library field as the API's JSON does: "specs[3].RunAt"
// (a spec of a batch) is "jobs[3].run_at"; what follows the first '[' of
// the rest is kept as it is, so "IDs[3]" is "ids[3]" and `Headers["x"]`
// is `headers["x"]`. A field the table lacks is given as the library
// names it.
func jsonField(field string) string {
	prefix := ""
	if rest, ok := strings.CutPrefix(field, "specs["); ok {
		if i := strings.Index(rest, "]."); i >= 0 {
			prefix, field = "jobs["+rest[:i]+"].", rest[i+2:]
		}
	}
	name, index := splitIndex(field)
	if mapped, ok := jsonFields[name]; ok {
		return prefix + mapped + index
	}
	return prefix + field
}

// goField is the inverse of jsonField, for the fields jsonFields lists.
func goField(field string) (string, bool) {
	prefix := ""
	if rest, ok := strings.CutPrefix(field, "jobs["); ok {
		if i := strings.Index(rest, "]."); i >= 0 {
			prefix, field = "specs["+rest[:i]+"].", rest[i+2:]
		}
	}
	name, index := splitIndex(field)
	for goName, jsonName := range jsonFields {
		if jsonName == name {
			return prefix + goName + index, true
		}
	}
	return "", false
}

// splitIndex splits a field at its first '[': `Headers["x"]` is Headers
// and ["x"], IDs[3] is IDs and [3]; a field without one has no index.
func splitIndex(field string) (name, index string) {
	if i := strings.IndexByte(field, '['); i >= 0 {
		return field[:i], field[i:]
	}
	return field, ""
}
