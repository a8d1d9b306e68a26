package wire

import (
	"errors"
	"maps"
	"net/http"
	"slices"

	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Code is the machine-readable kind of an error; each code has one HTTP
// status (Code.Status) and one exit code of the CLI.
type Code string

// The error codes.
const (
	CodeInvalidJSON      Code = "invalid_json"       // 400: the body is not the JSON expected
	CodeInvalidField     Code = "invalid_field"      // 400: a field, path segment or query parameter is wrong
	CodeUnknownField     Code = "unknown_field"      // 400: a field or query parameter the endpoint does not know
	CodeTooLarge         Code = "too_large"          // 413: body, payload or batch beyond its limit
	CodeUnauthorized     Code = "unauthorized"       // 401: no token, or an unknown one
	CodeForbidden        Code = "forbidden"          // 403: the token's role or queues do not allow this, or a browser was tricked into sending it
	CodeNotFound         Code = "not_found"          // 404: no such job, queue or route
	CodeConflict         Code = "conflict"           // 409: the id exists or the unique key is held (enqueue), the job is dead (cancel), the queue is in use (forget)
	CodeRateLimited      Code = "rate_limited"       // 429: the token's request rate limit, or the address's failed authentications; see Retry-After
	CodeMethodNotAllowed Code = "method_not_allowed" // 405: see Allow
	CodeUnavailable      Code = "unavailable"        // 503: Redis cannot be reached, is loading or is out of memory; see Retry-After
	CodeInternal         Code = "internal"           // 500: see the server's log
	// CodeNotReplicated is never an error response: an enqueue stored on
	// the master but not confirmed on the replicas its durability asked
	// for says so in its result (the single enqueue's 202, a batch item),
	// and the CLI exits with its code.
	CodeNotReplicated Code = "not_replicated"
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
	CodeNotReplicated:    http.StatusAccepted,
}

// Codes lists every code, sorted.
func Codes() []Code {
	return slices.Sorted(maps.Keys(codeStatus))
}

// Status returns the HTTP status of responses with code c; 500 for a code
// it does not know.
func (c Code) Status() int {
	if s, ok := codeStatus[c]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Error is an error, the value of the "error" member of an API error
// response and of what the CLI prints with --json when a command fails.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	// Field names what was wrong as the request wrote it: a JSON field
	// ("delay", "jobs[3].run_at"), a path segment ("queue", "id"), a query
	// parameter ("limit"), "body", a header ("Authorization", "Host"), or
	// a CLI flag ("--delay"). Empty when no one field is to blame.
	Field string `json:"field,omitempty"`
	// ExistingID is, on an enqueue's conflict, the id of the job that
	// caused it: the one with the id sent, or the one that holds the
	// unique key sent (Field is then "unique_key"). Empty otherwise.
	ExistingID string `json:"existing_id,omitempty"`
}

// ErrorReply is the body of an error response: {"error": {...}}.
type ErrorReply struct {
	Error Error `json:"error"`
}

// CodeOf classifies an error of the worker library (or one wrapping it)
// for the API's status and the CLI's exit code: validation errors are
// invalid_field, the sentinels have codes of their own (a missing job is
// not_found; an existing id, a held unique key, a dead job that cannot be
// cancelled and a queue in use are conflict; a job stored but not
// confirmed on replicas is not_replicated), and Redis that cannot serve
// for now (worker.IsRedisUnavailable: unreachable, loading, out of memory,
// or a deadline that ran out waiting for it) is unavailable. Anything else
// is internal.
//
// An error that carries its code (an ErrorCode method, as the API
// client's errors have: the code the server answered) keeps it, so that
// the CLI classifies the two ways to Redis alike.
func CodeOf(err error) Code {
	var coded interface{ ErrorCode() Code }
	if errors.As(err, &coded) {
		return coded.ErrorCode()
	}
	var ve *worker.ValidationError
	switch {
	case errors.As(err, &ve):
		return CodeInvalidField
	case errors.Is(err, worker.ErrNotReplicated):
		// Before unavailable: the wait's own failure may be a lost
		// connection, but the job is stored.
		return CodeNotReplicated
	case errors.Is(err, worker.ErrNotFound):
		return CodeNotFound
	case errors.Is(err, worker.ErrDuplicate), errors.Is(err, worker.ErrJobDead), errors.Is(err, admin.ErrQueueInUse):
		return CodeConflict
	case worker.IsRedisUnavailable(err):
		return CodeUnavailable
	}
	return CodeInternal
}
