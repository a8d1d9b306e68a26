package api

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/worker"
)

// Code is the machine-readable kind of an API error; each code has one
// HTTP status (Code.Status).
type Code string

// The error codes.
const (
	CodeInvalidJSON      Code = "invalid_json"       // 400: the body is not the JSON expected
	CodeInvalidField     Code = "invalid_field"      // 400: a field, path segment or query parameter is wrong
	CodeUnknownField     Code = "unknown_field"      // 400: a field or query parameter the endpoint does not know
	CodeTooLarge         Code = "too_large"          // 413: body, payload or batch beyond its limit
	CodeUnauthorized     Code = "unauthorized"       // 401: no token, or an unknown one
	CodeForbidden        Code = "forbidden"          // 403: the token's role or queues do not allow this, or a browser was tricked into sending it
	CodeNotFound         Code = "not_found"          // 404: no such job or route
	CodeConflict         Code = "conflict"           // 409: the id exists or the unique key is held (enqueue), or the job is dead (cancel)
	CodeRateLimited      Code = "rate_limited"       // 429: the token's request rate limit, or the address's failed authentications; see Retry-After
	CodeMethodNotAllowed Code = "method_not_allowed" // 405: see Allow
	CodeUnavailable      Code = "unavailable"        // 503: Redis not reached yet, or out of memory; see Retry-After
	CodeInternal         Code = "internal"           // 500: see the server's log
)

var codeStatus = map[Code]int{
	CodeInvalidJSON:      http.StatusBadRequest,
	CodeInvalidField:     http.StatusBadRequest,
	CodeUnknownField:     http.StatusBadRequest,
	CodeTooLarge:         http.StatusRequestEntityTooLarge,
	CodeUnauthorized:     http.StatusUnauthorized,
	CodeForbidden:        http.StatusForbidden,
	CodeNotFound:         http.StatusNotFound,
	CodeConflict:         http.StatusConflict,
	CodeRateLimited:      http.StatusTooManyRequests,
	CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	CodeUnavailable:      http.StatusServiceUnavailable,
	CodeInternal:         http.StatusInternalServerError,
}

// Status returns the HTTP status of responses with code c; 500 for a code
// this package does not know.
func (c Code) Status() int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is an API error, the value of the "error" member of an error
// response.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Field names what was wrong as the request wrote it: a JSON field
	// ("delay", "jobs[3].run_at"), a path segment ("queue", "id"), a query
	// parameter ("limit"), "body", or a header ("Authorization",
	// "Host"). Empty when no one field is to blame.
	Field string `json:"field,omitempty"`
	// ExistingID is, on an enqueue's conflict, the id of the job that
	// caused it: the one with the id sent, or the one that holds the
	// unique key sent (Field is then "unique_key"). Empty otherwise.
	ExistingID string `json:"existing_id,omitempty"`

	retryAfter time.Duration // sent as Retry-After with 429 and 503
	cause      error         // what Unwrap returns: a worker sentinel, on the client side
}

// Error implements error.
func (e *Error) Error() string { return e.Message }

// Unwrap returns the worker error the API error stands for, if any (the
// Client sets worker.ErrDuplicate, worker.ErrNotFound, ...), so that
// errors.Is works across the API as it does on a worker.Client.
func (e *Error) Unwrap() error { return e.cause }

func apiError(code Code, field, message string) *Error {
	return &Error{Code: code, Field: field, Message: message}
}

// errorOf maps an error of the backend to an API error: validation errors
// name their field, the worker's sentinels have codes of their own, and
// the rest is internal (the caller logs it; the client sees no detail).
func errorOf(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var ve *worker.ValidationError
	switch {
	case errors.As(err, &ve):
		field := jsonField(ve.Field)
		return apiError(CodeInvalidField, field, "invalid "+field+": "+ve.Reason)
	case errors.Is(err, worker.ErrNotFound):
		return apiError(CodeNotFound, "id", err.Error())
	case errors.Is(err, worker.ErrDuplicate):
		return apiError(CodeConflict, "id", err.Error())
	case errors.Is(err, worker.ErrJobDead):
		// Only Cancel returns it: a dead job has nothing left to cancel.
		return apiError(CodeConflict, "id", err.Error()+": there is nothing to cancel; requeue it or purge it through /dead")
	case errors.Is(err, worker.ErrRedisOOM):
		e := apiError(CodeUnavailable, "", err.Error())
		e.retryAfter = oomRetryAfter
		return e
	}
	return apiError(CodeInternal, "", "internal error; the server logged it")
}

// oomRetryAfter is the Retry-After of an enqueue refused because Redis is
// out of memory: long enough for workers to drain some jobs.
const oomRetryAfter = 10 * time.Second

// jsonFields maps the Go fields the worker library names in its validation
// errors (worker.ValidationError.Field) to this API's JSON names: the one
// table between the two vocabularies.
var jsonFields = map[string]string{
	"Queue":             "queue",
	"ID":                "id",
	"Payload":           "payload",
	"Delay":             "delay",
	"RunAt":             "run_at",
	"MaxAttempts":       "max_attempts",
	"Timeout":           "timeout",
	"Limit":             "limit",
	"Cursor":            "cursor",
	"Priority":          "priority",
	"UniqueKey":         "unique_key",
	"UniqueFor":         "unique_for",
	"UniqueAfterFinish": "unique_after_finish",
}

// jsonField names a library field as the API's JSON does: "specs[3].RunAt"
// (a spec of a batch) is "jobs[3].run_at". A field the table lacks is
// given as the library names it.
func jsonField(field string) string {
	prefix := ""
	if rest, ok := strings.CutPrefix(field, "specs["); ok {
		if i := strings.Index(rest, "]."); i >= 0 {
			prefix, field = "jobs["+rest[:i]+"].", rest[i+2:]
		}
	}
	if name, ok := jsonFields[field]; ok {
		return prefix + name
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
	for goName, jsonName := range jsonFields {
		if jsonName == field {
			return prefix + goName, true
		}
	}
	return "", false
}
