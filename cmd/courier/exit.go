package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// The exit codes. A failure is classified by wire.CodeOf, as the HTTP API
// classifies it for its status; in --api mode an *api.Error carries the
// code the server answered, which CodeOf reads, so the two modes exit
// alike.
const (
	exitOK          = 0
	exitFailure     = 1 // anything else: a bad configuration, a refused token, an internal error
	exitUsage       = 2 // the command line: unknown command or flag, missing or bad flag value
	exitNotFound    = 3 // no such job (inspect --job, cancel, dead requeue/purge --job)
	exitConflict    = 4 // the id exists or the unique key is held (enqueue), the job is dead (cancel), the queue is in use
	exitUnavailable = 5 // Redis, or the API with --api, cannot be reached or cannot serve now: try again later
	// exitNotReplicated: enqueue --replicas stored the job on the master,
	// but fewer replicas than asked confirmed it in time.
	exitNotReplicated = 6
)

// exitCodes document the codes, for "courier help" (and docs/cli.md).
var exitCodes = []struct {
	code    int
	meaning string
}{
	{exitOK, "success (healthcheck: the daemon is ready)"},
	{exitFailure, "failure (healthcheck: not ready or not reached)"},
	{exitUsage, "usage error: unknown command or flag, missing or invalid flag value"},
	{exitNotFound, "not found: no such job"},
	{exitConflict, "conflict: the id exists or the unique key is held, the job is dead, the queue is in use"},
	{exitUnavailable, "Redis (or, with --api, the API) unavailable: try again later"},
	{exitNotReplicated, "enqueue --replicas: the job is stored, but not confirmed on the replicas asked for"},
	{exitSecondSignal, "run, dev: a second signal cut the drain short"},
}

// failure is how a command failed: its exit code and what --json prints.
type failure struct {
	code  int
	reply wire.Error
}

// classify maps err to its exit code and wire error. A validation error of
// the library that names one of the command's flags is a usage error.
func classify(err error, fields map[string]string) failure {
	var nr *notReadyError
	if errors.As(err, &nr) {
		return failure{exitFailure, wire.Error{Code: wire.CodeUnavailable, Message: nr.msg}}
	}
	var ue *usageError
	if errors.As(err, &ue) {
		code := wire.CodeInvalidField
		if strings.HasPrefix(ue.msg, "flag provided but not defined") {
			code = wire.CodeUnknownField
		}
		return failure{exitUsage, wire.Error{Code: code, Message: ue.msg, Field: ue.field}}
	}
	var ve *worker.ValidationError
	if errors.As(err, &ve) {
		if flag, _, ok := fieldFlag(fields, ve.Field); ok {
			return failure{exitUsage, wire.Error{Code: wire.CodeInvalidField, Message: flagError(err, fields).Error(), Field: flag}}
		}
	}
	code := wire.CodeOf(err)
	reply := wire.Error{Code: code, Message: flagError(err, fields).Error()}
	var ex *explainedError
	if errors.As(err, &ex) {
		reply.ExistingID = ex.existingID
	}
	exit := exitCodeOf(code)
	if code == wire.CodeNotFound && !errors.Is(err, worker.ErrNotFound) {
		// Not a job the API did not find: a route it does not serve (an
		// older server, or the API disabled).
		exit = exitFailure
	}
	return failure{exit, reply}
}

// exitCodeOf is the exit code of an error of code c (not a usage error).
func exitCodeOf(c wire.Code) int {
	switch c {
	case wire.CodeNotFound:
		return exitNotFound
	case wire.CodeConflict:
		return exitConflict
	case wire.CodeUnavailable:
		return exitUnavailable
	case wire.CodeNotReplicated:
		return exitNotReplicated
	}
	return exitFailure
}

// explainedError is an error of the library told for people: msg is what
// the CLI prints, cause the sentinel that classifies it, and existingID,
// on a conflict, the job that caused it (an enqueue's existing id, or the
// holder of its unique key) for --json.
type explainedError struct {
	msg        string
	cause      error
	existingID string
}

func (e *explainedError) Error() string { return e.msg }
func (e *explainedError) Unwrap() error { return e.cause }

// flagError rewrites a validation error of the library to name the flag
// that set the field: "invalid --at: …" rather than "invalid RunAt: …",
// `invalid --header "X": …` rather than `invalid Headers["X"]: …`.
func flagError(err error, flags map[string]string) error {
	var ve *worker.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	if flag, key, ok := fieldFlag(flags, ve.Field); ok {
		if key != "" {
			flag += " " + key
		}
		return fmt.Errorf("invalid %s: %s", flag, ve.Reason)
	}
	return err
}

// fieldFlag returns the flag that set a library field, and for an entry
// of a map the flag fills (Headers["x"], from --header x=…) the entry's
// key as the library quoted it.
func fieldFlag(flags map[string]string, field string) (flag, key string, ok bool) {
	if flag, ok := flags[field]; ok {
		return flag, "", true
	}
	base, rest, _ := strings.Cut(field, "[")
	if key, ok = strings.CutSuffix(rest, "]"); !ok || !strings.HasPrefix(key, `"`) {
		return "", "", false
	}
	flag, ok = flags[base]
	return flag, key, ok
}

// report prints how the call ended, on stderr (and with --json, as
// {"error": …} on stdout), and returns the exit code.
func (c *call) report(err error, std streams) int {
	if err == nil {
		return exitOK
	}
	f := classify(err, c.fields)
	var pe *printedError
	if errors.As(err, &pe) {
		return f.code // reported in full by the command, --json included
	}
	// Errors carry text from Redis and the API; see printableError.
	msg := printableError(f.reply.Message)
	if c.json() {
		_ = writeJSON(std.out, wire.ErrorReply{Error: f.reply})
	}
	if std.console.jsonLogs() {
		std.console.failed(c.name, f)
		return f.code
	}
	var ue *usageError
	if !errors.As(err, &ue) || !ue.printed {
		fmt.Fprintf(std.err, "courier %s: %s\n", c.name, msg)
	}
	if f.code == exitUsage {
		fmt.Fprintf(std.err, "Run 'courier help %s' for usage.\n", c.name)
	}
	return f.code
}
