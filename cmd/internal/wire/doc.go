// Package wire is the one JSON shape of Courier's objects: a job, a queue,
// a page of jobs, the result of a dead-set triage, a job key and an error.
// The HTTP API writes these types, its Go client reads them, and the CLI
// prints them with --json, so that a script written against one reads the
// other; cmd/internal/api/openapi.json describes the same fields
// (cmd/internal/api's TestOpenAPIMatchesWire holds each type to its
// schema). Encode writes them as the API does.
//
// Times are RFC 3339 in UTC, durations Go duration strings ("1m30s"), and
// a value that is not set is left out, or null where the document says so.
package wire
