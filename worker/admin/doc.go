// Package admin is the operator's side of Courier, for the tools that look
// after queues rather than run jobs: the courier CLI, the HTTP API and the
// web UI, dashboards, and any program of yours that lists, counts, triages,
// pauses or forgets. An application that only enqueues and runs handlers
// needs package worker alone.
//
// Operator is the one list of what an operator can do. *Client does it
// straight on Redis; the HTTP API serves exactly that list, and its Go
// client implements Operator too, so a tool written against Operator works
// either way.
package admin
