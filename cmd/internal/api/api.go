package api

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// QueueCounter counts the known queues: the one read the API needs
// beyond admin.Operator, for the cap on the queues producers create
// (Options.MaxQueues), which no operator's verb answers. *admin.Client is
// one; with MaxQueues set, a backend that is not one fails the enqueues
// the cap checks (500, logged).
type QueueCounter interface {
	QueueCount(ctx context.Context) (int64, error)
}

var _ QueueCounter = (*admin.Client)(nil)

// Role is what a token may do.
type Role string

// The roles.
const (
	// RoleProducer may enqueue jobs, read them and cancel them.
	RoleProducer Role = "producer"
	// RoleAdmin may do everything.
	RoleAdmin Role = "admin"
)

// Token is one accepted bearer token. How strong a secret must be is the
// configuration's rule (package config), not New's.
type Token struct {
	Name   string // in logs and rate limits
	Secret string // what the client sends; not empty
	Role   Role
	// Queues limits the token to these queues: a route on any other gets
	// 403, and GET /v1/queues lists only these. Empty means every queue.
	Queues []string
}

// Options configure the API. Backend and one of Tokens or InsecureNoAuth
// are required.
type Options struct {
	// Backend returns the operator the API serves (each route is a verb
	// of admin.Operator; the daemon's is an *admin.Client), or nil while
	// there is none yet (Redis not reached): requests then get 503.
	Backend func() admin.Operator
	// Tokens are the accepted bearer tokens.
	Tokens []Token
	// InsecureNoAuth serves every route to anyone, as an admin. It is
	// refused together with Tokens.
	InsecureNoAuth bool
	// RateLimit limits each token's requests: a token bucket holding N
	// requests, refilled at N per Per. The zero value means no limit.
	RateLimit worker.RateLimit
	// FailedAuthLimit limits each client address's failed
	// authentications (a malformed Authorization header or an unknown
	// token; a request without the header is refused but spends nothing,
	// since any web page can make a browser send one): a bucket of N failures, refilled at N per Per. Once it is empty, every
	// request from the address gets 429 without its token being checked,
	// each held back for a second (or until the address may try again) so
	// that a flood's connections carry one request a second. The address is
	// the connection's (an IPv6 client's /64); X-Forwarded-For is not
	// trusted, so behind a proxy all clients share the proxy's. No effect
	// with InsecureNoAuth. The zero value means no limit.
	FailedAuthLimit worker.RateLimit
	// AllowedHosts are the host names (without port) that requests may
	// address, in their Host header, when InsecureNoAuth is set, besides
	// IP addresses, localhost and *.localhost: any other name may be a
	// web page's DNS rebinding. Ignored with Tokens. Default: none.
	AllowedHosts []string
	// MaxQueues caps the queues that producer tokens without a queue list
	// create (queuecap.go): their enqueue to a queue that does not exist
	// is refused with 403 once there are MaxQueues queues. A queue that
	// exists is never refused; admins and producers limited to their
	// queues are not capped. Zero means no cap.
	MaxQueues int
	// Limits bound requests; zero fields take their defaults.
	Limits Limits
	// WriteTimeout is the write timeout of the listener that serves the
	// API (whose timeouts bound reading requests and writing responses;
	// see Listen). Each request's work ends a little before it (by a
	// fifth of it, at most 1s), with 503 unavailable, so that the reply
	// still reaches the client. Default 30s.
	WriteTimeout time.Duration
	// Logger receives one debug line per request, the causes of 500s, an
	// info line per failed authentication and a warning per address
	// throttled, with the client's address. Tokens are never logged.
	// Default: discard.
	Logger *slog.Logger
	// Registerer receives courier_api_auth_failures_total, the requests
	// refused for want of a valid token by reason (missing, invalid,
	// throttled). Two Handlers on one Registerer share the counter. Nil
	// means no metrics.
	Registerer prometheus.Registerer
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// WriteTimeoutDefault is Options.WriteTimeout's default: the listeners'.
const WriteTimeoutDefault = 30 * time.Second

// workOf is how long a request's work may last under the write timeout
// write: a little less (a fifth, at most 1s), so that its timeout can
// still be told to the client.
func workOf(write time.Duration) time.Duration { return write - min(write/5, time.Second) }

// Handler serves the API. Make one with New.
type Handler struct {
	opts    Options
	limits  Limits
	tokens  []token
	limiter *limiter[string] // per token name; nil for no limit
	// failures limits failed authentications per client address; nil for
	// no limit.
	failures *limiter[netip.Addr]
	hold     time.Duration // throttleHold; tests shorten it
	held     atomic.Int64  // throttled requests held now; at most maxHeld
	metrics  authMetrics
	browser  *browserGuard
	log      *slog.Logger
	now      func() time.Time
	mux      *http.ServeMux
	routes   []route
	byName   map[string]route // "METHOD /path" → route, for Permit
	// triageMax bounds the jobs a requeue or purge request matches:
	// TriageMax; tests lower it.
	triageMax int
	// anonymous is every caller's principal without authentication.
	anonymous Principal
	// known are the queues seen to exist, for MaxQueues.
	known knownQueues
}

var _ http.Handler = (*Handler)(nil)

// New checks opts and returns the API's handler. It serves every path
// under /v1/ (and answers 404 for any other); mount it with
// mux.Handle("/v1/", h).
func New(opts Options) (*Handler, error) {
	if opts.Backend == nil {
		return nil, errors.New("api: Options.Backend is required")
	}
	tokens, err := newTokens(opts.Tokens, opts.InsecureNoAuth)
	if err != nil {
		return nil, err
	}
	limits, err := opts.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	opts.WriteTimeout = cmp.Or(opts.WriteTimeout, WriteTimeoutDefault)
	if opts.WriteTimeout < 0 {
		return nil, errors.New("api: negative WriteTimeout")
	}
	if opts.MaxQueues < 0 {
		return nil, errors.New("api: negative MaxQueues")
	}
	limits.maxWait = maxWaitOf(workOf(opts.WriteTimeout))
	if err := validRate("RateLimit", opts.RateLimit); err != nil {
		return nil, err
	}
	if err := validRate("FailedAuthLimit", opts.FailedAuthLimit); err != nil {
		return nil, err
	}
	browser, err := newBrowserGuard(opts.InsecureNoAuth, opts.AllowedHosts)
	if err != nil {
		return nil, err
	}
	metrics, err := newAuthMetrics(opts.Registerer)
	if err != nil {
		return nil, err
	}
	opts.Tokens = nil // the handler keeps digests only
	h := &Handler{
		opts:    opts,
		limits:  limits,
		tokens:  tokens,
		metrics: metrics,
		browser: browser,
		log:     cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)),
		now:     opts.Now,
		mux:     http.NewServeMux(),
		// A field, not the constant, so that tests can page with a few jobs.
		triageMax: TriageMax,
		anonymous: newAnonymous(),
	}
	if h.now == nil {
		h.now = time.Now
	}
	if opts.RateLimit != (worker.RateLimit{}) {
		h.limiter = newLimiter[string](opts.RateLimit, maxKeys)
	}
	if opts.FailedAuthLimit != (worker.RateLimit{}) && !opts.InsecureNoAuth {
		h.failures = newLimiter[netip.Addr](opts.FailedAuthLimit, maxKeys)
		h.hold = throttleHold
	}
	h.routes = h.table()
	h.byName = make(map[string]route, len(h.routes))
	for _, rt := range h.routes {
		h.mux.Handle(rt.method+" "+rt.path, h.wrap(rt))
		h.byName[rt.method+" "+rt.path] = rt
	}
	h.mux.HandleFunc("/", h.fallback)
	return h, nil
}

// ServeHTTP implements http.Handler. Before any route, it refuses
// throttled addresses (failures.go), then requests a browser was tricked
// into (browser.go).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.refuseThrottled(w, r) {
		return
	}
	if e := h.browser.refuse(r); e != nil {
		writeError(w, e)
		h.log.Debug("api request", "method", r.Method, "route", "", "status", e.Code.Status(), "token", "")
		return
	}
	h.mux.ServeHTTP(w, r)
}

// route is one endpoint.
type route struct {
	method, path string
	// role is the least role that may call it; "" for anyone.
	role Role
	// offline routes need no backend.
	offline bool
	// params routes take query parameters; the others refuse any.
	params bool
	serve  func(c *call) (int, any, error)
}

// call is one request on its way through a route.
type call struct {
	ctx     context.Context
	w       http.ResponseWriter
	r       *http.Request
	ident   identity
	backend admin.Operator
	now     time.Time
}

// table lists the routes; openapi.json documents exactly these (a test
// checks).
func (h *Handler) table() []route {
	return []route{
		{method: http.MethodGet, path: "/v1/openapi.json", offline: true, serve: serveOpenAPI},
		{method: http.MethodPost, path: "/v1/queues/{queue}/jobs", role: RoleProducer, serve: h.enqueue},
		{method: http.MethodPost, path: "/v1/queues/{queue}/jobs/batch", role: RoleProducer, serve: h.enqueueBatch},
		{method: http.MethodGet, path: "/v1/queues/{queue}/jobs/{id}", role: RoleProducer, serve: h.getJob},
		{method: http.MethodDelete, path: "/v1/queues/{queue}/jobs/{id}", role: RoleProducer, serve: h.cancelJob},
		{method: http.MethodGet, path: "/v1/queues/{queue}/jobs", role: RoleAdmin, params: true, serve: h.listJobs},
		{method: http.MethodGet, path: "/v1/queues", role: RoleAdmin, params: true, serve: h.listQueues},
		{method: http.MethodGet, path: "/v1/queues/{queue}", role: RoleAdmin, serve: h.getQueue},
		{method: http.MethodDelete, path: "/v1/queues/{queue}", role: RoleAdmin, serve: h.forgetQueue},
		{method: http.MethodPost, path: "/v1/queues/{queue}/pause", role: RoleAdmin, serve: h.pauseQueue},
		{method: http.MethodPost, path: "/v1/queues/{queue}/resume", role: RoleAdmin, serve: h.resumeQueue},
		{method: http.MethodGet, path: "/v1/queues/{queue}/keys", role: RoleAdmin, params: true, serve: h.listKeys},
		{method: http.MethodGet, path: "/v1/queues/{queue}/keys/{key}", role: RoleAdmin, serve: h.getKey},
		{method: http.MethodPut, path: "/v1/queues/{queue}/keys/{key}", role: RoleAdmin, serve: h.setKeyLimits},
		{method: http.MethodDelete, path: "/v1/queues/{queue}/keys/{key}", role: RoleAdmin, serve: h.resetKeyLimits},
		{method: http.MethodPost, path: "/v1/queues/{queue}/dead/requeue", role: RoleAdmin, serve: h.triage(admin.TriageRequeue)},
		{method: http.MethodPost, path: "/v1/queues/{queue}/dead/purge", role: RoleAdmin, serve: h.triage(admin.TriagePurge)},
		{method: http.MethodPost, path: "/v1/queues/{queue}/cancelled/requeue", role: RoleAdmin, serve: h.triageOf(worker.StateCancelled, admin.TriageRequeue)},
		{method: http.MethodPost, path: "/v1/queues/{queue}/cancelled/purge", role: RoleAdmin, serve: h.triageOf(worker.StateCancelled, admin.TriagePurge)},
	}
}

// wrap runs a route: authentication, role, rate limit, backend, then the
// route itself, and one log line.
func (h *Handler) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ident, status, err := h.run(w, r, rt, h.now())
		if err != nil {
			e := errorOf(err)
			switch {
			case r.Context().Err() != nil:
				// The client left; nobody reads the reply.
			case e.Code == wire.CodeUnavailable:
				h.log.Warn("api request refused: "+unavailableReason(err), "method", r.Method, "route", rt.path, "token", ident.name, "err", err)
			case e.Code == wire.CodeInternal:
				h.log.Error("api request failed", "method", r.Method, "route", rt.path, "token", ident.name, "err", err)
			}
			status = e.Code.Status()
			writeError(w, e)
		}
		h.log.Debug("api request", "method", r.Method, "route", rt.path, "status", status,
			"token", ident.name, "duration", time.Since(start))
	})
}

// run does the work of wrap at now by the API's clock; on success it has
// written the response.
func (h *Handler) run(w http.ResponseWriter, r *http.Request, rt route, now time.Time) (identity, int, error) {
	var ident identity
	if rt.role != "" {
		var err *Error
		if ident, err = h.authenticate(r, rt.path); err != nil {
			return ident, 0, err
		}
		if err := ident.allows(rt, r.PathValue("queue")); err != nil {
			return ident, 0, err
		}
		if err := h.limit(ident, now); err != nil {
			return ident, 0, err
		}
	}
	if !rt.params {
		if err := noQuery(r.URL.RawQuery); err != nil {
			return ident, 0, err
		}
	}
	c := &call{r: r, w: w, ident: ident, now: now}
	if !rt.offline {
		if c.backend = h.opts.Backend(); c.backend == nil {
			e := apiError(wire.CodeUnavailable, "", "Redis has not been reached yet; retry shortly")
			e.retryAfter = timeoutRetryAfter
			return ident, 0, e
		}
	}
	// The work ends a little before the write deadline, so that its
	// timeout can still be told to the client.
	ctx, cancel := context.WithTimeout(r.Context(), workOf(h.opts.WriteTimeout))
	defer cancel()
	c.ctx = ctx
	status, body, err := rt.serve(c)
	if err != nil {
		return ident, 0, err
	}
	writeJSON(w, status, body)
	return ident, status, nil
}

// fallback answers requests that match no route: 401 without a valid
// token (routes are not probed anonymously), 405 with Allow when the path
// has routes for other methods, else 404.
func (h *Handler) fallback(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	ident, err := h.authenticate(r, "")
	if err == nil {
		if allow := h.allowed(r); len(allow) > 0 {
			w.Header().Set("Allow", allow)
			err = apiError(wire.CodeMethodNotAllowed, "", r.Method+" is not allowed here; allowed: "+allow)
		} else {
			err = apiError(wire.CodeNotFound, "", "no route "+r.Method+" "+r.URL.Path+"; see /v1/openapi.json")
		}
	}
	writeError(w, err)
	h.log.Debug("api request", "method", r.Method, "route", "", "status", err.Code.Status(),
		"token", ident.name, "duration", time.Since(start))
}

// allowed lists the methods that have a route for r's path.
func (h *Handler) allowed(r *http.Request) string {
	allow := ""
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete} {
		probe := *r
		probe.Method = m
		if _, pattern := h.mux.Handler(&probe); pattern != "" && pattern != "/" {
			if allow != "" {
				allow += ", "
			}
			allow += m
		}
	}
	return allow
}

// Disabled returns the handler of an API that is not served: every request
// gets 404 not_found with reason as the message, so that a caller learns
// why instead of guessing. The daemon mounts it when the configuration
// gives no way to authenticate callers.
func Disabled(reason string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, apiError(wire.CodeNotFound, "", reason))
	})
}
