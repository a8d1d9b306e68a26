// Package ui is Courier's operator web UI, served by the daemon under
// /ui/: an overview of every queue (sizes, leader, workers, the last hour
// of processed and failed jobs, lag), a page per queue (jobs by state,
// paged by cursor, with the progress of the active ones; the dead set with
// its triage; the completed jobs, when the queue holds some, with a preview
// of each result; its job keys with the most waiting jobs; enqueue, pause
// and resume), a page per job (payload, headers, key, state, progress of a
// running job, finish time and result of a completed one, timeline,
// cancel, requeue, purge), a queue's keys and a page per key (its waiting
// and running jobs, its cap and weight, and the form that sets or resets
// them), and the periodic schedules, the fleet and the leader locks across
// queues.
//
// The pages are rendered on the server with html/template, which escapes
// every value, so a payload or an error holding markup shows as text. The
// CSS and the one small script are embedded with the templates and served
// under /ui/static/ with a content hash in their URLs; the
// Content-Security-Policy allows nothing else (no inline script or style,
// no third-party request). Read-only pages work without JavaScript.
//
// # Sessions
//
// An operator logs in with a token of the HTTP API (API.Login, which
// counts a wrong one as a failed authentication of the client's address,
// as the API does). The session is a cookie (HttpOnly, SameSite=Strict;
// over TLS __Host-courier_session, Secure with Path=/, over plain HTTP
// courier_session on /ui/: cookie.go), holding
//
//	base64url("v1|<token name>|<expiry, Unix seconds>|<nonce>") "." base64url(MAC)
//
// where the MAC is the principal's own HMAC (api.Principal.Sign), keyed by
// a digest of the token's secret. Each request looks the token up by name
// (API.Lookup), so the session carries the token's current role and
// queues, and ends when the token is removed or its secret changed, so
// daemons behind one load balancer that share the tokens accept each
// other's sessions. Nothing is kept but the log-outs: one Redis key per
// session logged out, <prefix>:ui:revoked:<nonce>, expiring with the
// session (Options.Revocations, revoke.go), so a log-out holds on every
// daemon and across restarts. Each request checks it; when Redis cannot
// answer, the session is refused with a 503 page (fail closed). Without authentication (API.Open, courier dev)
// there is no login: a request without a session is given an anonymous
// one, so that forms carry CSRF tokens all the same.
//
// # CSRF and the browser guard
//
// Every request passes API.Guard (the API's refusal of cross-origin
// writes and, without authentication, of DNS rebinding). Every POST is
// also checked with net/http's CrossOriginProtection and must carry the
// form field csrf = base64url(Sign("csrf|" + nonce)), bound to the
// session; a POST without it does nothing and gets 403.
//
// # Actions go through the API
//
// Pause, resume, cancel, enqueue, requeue, purge and a key's limits (set,
// reset) are not done here: each is an API request (POST
// /v1/queues/{queue}/pause, PUT /v1/queues/{queue}/keys/{key}, ...) built in
// process and served by API.ServeAs on the session's principal, so the
// roles, queue limits, rate limit, validation and messages are the API's
// own. The reply is read from an in-memory ResponseWriter; an error reply
// becomes an error flash with the API's message, a success a success
// flash, and the browser is redirected (POST/redirect/GET). Flashes travel
// in a short-lived cookie signed like the session. A purge first shows a
// dry run's count on a confirmation page. The buttons a principal may not
// use are not shown (Permit again), but the check that counts is the
// API's.
//
// # One role rule
//
// Each page shows what an API route answers (the overview and the
// fleet, locks and periodic pages GET /v1/queues; a queue's page GET
// /v1/queues/{queue} and its jobs; a job's page GET
// /v1/queues/{queue}/jobs/{id}; the keys page GET
// /v1/queues/{queue}/keys and a key's page GET …/keys/{key}; the purge
// confirmation a purge), and asks
// API.Permit, the rule every API request passes, before it reads
// anything: a principal sees through the UI what it may read through the
// API, no more. A producer's overview and queue pages hold the forms it
// may use (open a queue, find a job by id, enqueue) and say why they show
// nothing else, in the API's words.
//
// The pages read through Backend (the daemon's admin.Client) directly, and read
// every list a page at a time by cursor, never whole: the overview, fleet,
// locks and periodic pages read the set of queues 100 names at a time
// (admin.Client.Queues: SSCAN) and each queue of the page concurrently, so a
// page costs the same however many queues there are; a queue's page reads
// 50 jobs. The minutes of history that have ended never change, so the
// Handler keeps them (historycache.go) and a refresh reads only the
// minutes since.
//
// # Live refresh
//
// Regions of a page marked data-live (counts, charts, lists) are refreshed
// by static/app.js every Options.Refresh while the tab is visible: it
// fetches the page again with the header X-Courier-Live, parses it and
// swaps each region for its namesake by id. Forms stay outside live
// regions, so nothing the operator types is replaced. A fetch that lands
// on the login page stops refreshing and says the session ended.
package ui
