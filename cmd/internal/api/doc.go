// Package api is Courier's HTTP API under /v1: enqueue jobs one at a time
// or in batches, read and cancel them, see queue sizes and the fleet that
// serves each queue, list jobs by state, requeue and purge dead jobs by id
// or by filter, forget retired queues, and read job keys (the tenants a
// queue's jobs belong to) and set their limits. It speaks JSON in and out;
// every error is {"error": {"code", "message", "field"}} with the status
// its code implies (see wire.Code), and an enqueue's conflict names the
// job that caused it in "existing_id".
//
// New returns an http.Handler for the routes; the daemon mounts it on its
// main listener next to /metrics, or serves it on a listener of its own
// with Listen. The routes and their roles:
//
//	GET    /v1/openapi.json                          anyone (the OpenAPI 3 document)
//	POST   /v1/queues/{queue}/jobs                   producer, admin
//	POST   /v1/queues/{queue}/jobs/batch             producer, admin
//	GET    /v1/queues/{queue}/jobs/{id}              producer, admin
//	DELETE /v1/queues/{queue}/jobs/{id}              producer, admin (cancel a job, running or not)
//	GET    /v1/queues/{queue}/jobs                   admin (?state=&cursor=&limit=, and for dead jobs &error=&died_after=&died_before=)
//	GET    /v1/queues                                admin
//	GET    /v1/queues/{queue}                        admin
//	DELETE /v1/queues/{queue}                        admin (forget a retired queue; 409 while in use)
//	POST   /v1/queues/{queue}/pause                  admin
//	POST   /v1/queues/{queue}/resume                 admin
//	GET    /v1/queues/{queue}/keys                   admin (?limit=: the keys with the most waiting jobs)
//	GET    /v1/queues/{queue}/keys/{key}             admin
//	PUT    /v1/queues/{queue}/keys/{key}             admin (the key's own cap and weight)
//	DELETE /v1/queues/{queue}/keys/{key}             admin (the key's own limits removed)
//	POST   /v1/queues/{queue}/dead/requeue           admin (by ids, by filter, or every dead job; TriageMax per request)
//	POST   /v1/queues/{queue}/dead/purge             admin (the same selection, deleted)
//
// Objects (jobs, queues, pages, triage results, keys, errors) are written
// in the one shape of package wire. When Redis cannot serve (unreachable,
// loading, out of memory, or too slow for the request's deadline), every
// route that needs it answers 503 unavailable with Retry-After.
//
// Requests carry "Authorization: Bearer <token>"; tokens are compared in
// constant time through their SHA-256 digests and never logged. Each token
// has its own request rate limit (a token bucket, ratelimit.go) and may be
// limited to some queues. Failed authentications are counted, logged with
// the client's address, and limited per address: an address that fails
// too often is refused unchecked, each refusal held back a second so that
// a flood costs next to nothing (failures.go). Requests a web page could
// make a browser send are refused (browser.go): cross-origin writes
// always, and without authentication any request addressed to a name a
// page could rebind (DNS rebinding). Request bodies are read whole up to
// a limit and decoded strictly: unknown fields, fields given
// twice, wrong types and trailing data are refused with the field named,
// before anything is written; a job's headers are checked by the library,
// before anything is written too. An enqueue carries the W3C trace
// context of its request (traceparent, tracestate) to the backend, so a
// traced daemon enqueues as a child of the caller's span (traced, in
// jobs.go). Every route serves a verb of admin.Operator (Options.Backend),
// and Client, the Go client of the API that the courier CLI's --api mode
// uses, implements admin.Operator again over HTTP.
package api
