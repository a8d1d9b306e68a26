package ui

import (
	"context"
	"errors"
	"html/template"
	"log/slog"
	"net/http"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/worker/admin"
)

// Backend is what the pages read through: the operator's verbs
// (admin.Operator; the pages only read, and every change goes through the
// API) and the three reads that only pages show and no verb gives: how
// many queues there are (the overview's total), a queue's minutes of
// history (its charts) and its periodic schedules. *admin.Client is one.
type Backend interface {
	admin.Operator
	QueueCount(ctx context.Context) (int64, error)
	History(ctx context.Context, queue string, from, to time.Time) ([]admin.HistoryMinute, error)
	Periodic(ctx context.Context, queue string) ([]admin.PeriodicStatus, error)
}

var _ Backend = (*admin.Client)(nil)

// API is the HTTP API the UI logs in with and acts through; *api.Handler
// is one.
type API interface {
	// Open reports whether the API serves without authentication.
	Open() bool
	// Login returns the principal of the token whose secret a login form
	// presents; the error is an *api.Error.
	Login(r *http.Request, secret string) (api.Principal, error)
	// Lookup returns the principal of the token named name, as configured
	// now.
	Lookup(name string) (api.Principal, bool)
	// ServeAs serves an API request on p's behalf.
	ServeAs(w http.ResponseWriter, r *http.Request, p api.Principal)
	// Guard returns the refusal of a request a browser was tricked into.
	Guard(r *http.Request) error
	// Permit returns nil when p may call the API's route ("METHOD
	// /path" as the API declares it) on queue, else the API's refusal (an
	// *api.Error): the one rule of roles and queue limits.
	Permit(p api.Principal, route, queue string) error
}

var _ API = (*api.Handler)(nil)

// Defaults of Options.
const (
	// SessionTTLDefault is Options.SessionTTL's default.
	SessionTTLDefault = 12 * time.Hour
	// RefreshDefault is Options.Refresh's default.
	RefreshDefault = 5 * time.Second
)

// Options configure the UI. Backend, API and Revocations are required.
type Options struct {
	// Backend returns the client the pages read through, or nil while
	// Redis has not been reached: pages then answer 503 with Retry-After.
	Backend func() Backend
	// API is the HTTP API the UI logs in with and acts through.
	API API
	// Revocations keep the sessions logged out (RedisRevocations for a
	// daemon: every daemon sharing the Redis refuses them, restarts
	// included). A session is checked against them on each request, and
	// refused with a 503 page when they cannot answer.
	Revocations Revocations
	// SessionTTL is how long a login lasts. Default SessionTTLDefault.
	SessionTTL time.Duration
	// Refresh is the interval of the live refresh of the pages' counts,
	// charts and lists, at least a second. Default RefreshDefault.
	Refresh time.Duration
	// Logger receives the causes of 500s and a warning per page that Redis
	// could not serve. Default: discard.
	Logger *slog.Logger
	// Now is the clock of sessions and of the pages. Default time.Now.
	Now func() time.Time
}

// Handler serves the UI under /ui/. Make one with New.
type Handler struct {
	opts    Options
	log     *slog.Logger
	now     func() time.Time
	pages   map[string]*template.Template
	static  map[string]asset
	css, js string // the assets' URLs, with their content hash
	origin  *http.CrossOriginProtection
	history *historyCache
	mux     *http.ServeMux
}

var _ http.Handler = (*Handler)(nil)

// New checks opts and returns the UI's handler, which serves every path
// under /ui/; mount it with mux.Handle("/ui/", h).
func New(opts Options) (*Handler, error) {
	switch {
	case opts.Backend == nil:
		return nil, errors.New("ui: Options.Backend is required")
	case opts.API == nil:
		return nil, errors.New("ui: Options.API is required")
	case opts.Revocations == nil:
		return nil, errors.New("ui: Options.Revocations is required")
	case opts.SessionTTL < 0:
		return nil, errors.New("ui: negative Options.SessionTTL")
	case opts.Refresh != 0 && opts.Refresh < time.Second:
		return nil, errors.New("ui: Options.Refresh must be at least 1s")
	}
	if opts.SessionTTL == 0 {
		opts.SessionTTL = SessionTTLDefault
	}
	if opts.SessionTTL < time.Second {
		return nil, errors.New("ui: Options.SessionTTL must be at least 1s")
	}
	if opts.Refresh == 0 {
		opts.Refresh = RefreshDefault
	}
	h := &Handler{
		opts:    opts,
		log:     opts.Logger,
		now:     opts.Now,
		origin:  http.NewCrossOriginProtection(),
		history: newHistoryCache(),
		mux:     http.NewServeMux(),
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	var err error
	if h.static, h.css, h.js, err = loadAssets(); err != nil {
		return nil, err
	}
	if h.pages, err = parsePages(); err != nil {
		return nil, err
	}
	h.routes()
	return h, nil
}

// routes registers the pages (GET, with a session), the actions (POST,
// with a session and its CSRF token) and the public routes.
func (h *Handler) routes() {
	m := h.mux
	m.HandleFunc("GET /ui/static/{name}", h.serveStatic)
	m.HandleFunc("GET /ui/login", h.loginPage)
	m.HandleFunc("POST /ui/login", h.login)
	m.Handle("POST /ui/logout", h.action(h.logout))

	// Each page names the API route whose data it shows (permit.go): a
	// principal the API would refuse it is refused the page. The
	// overview and a queue's page show a producer what it may use.
	m.Handle("GET /ui/{$}", h.page("", h.overview))
	m.Handle("GET /ui/open", h.page("", h.open))
	m.Handle("GET /ui/periodic", h.page(routeQueues, h.periodic))
	m.Handle("GET /ui/fleet", h.page(routeQueues, h.fleet))
	m.Handle("GET /ui/locks", h.page(routeQueues, h.locks))
	m.Handle("GET /ui/queues/{queue}", h.page(routeEnqueue, h.queue))
	m.Handle("GET /ui/queues/{queue}/find", h.page(routeJob, h.find))
	m.Handle("GET /ui/queues/{queue}/jobs/{id...}", h.page(routeJob, h.job))
	m.Handle("GET /ui/queues/{queue}/purge", h.page(routePurge, h.purgeConfirm))
	m.Handle("GET /ui/queues/{queue}/keys", h.page(routeKeys, h.keys))
	m.Handle("GET /ui/queues/{queue}/keys/{key...}", h.page(routeKey, h.key))

	m.Handle("POST /ui/queues/{queue}/pause", h.action(h.pause))
	m.Handle("POST /ui/queues/{queue}/resume", h.action(h.resume))
	m.Handle("POST /ui/queues/{queue}/enqueue", h.action(h.enqueue))
	m.Handle("POST /ui/queues/{queue}/cancel", h.action(h.cancel))
	m.Handle("POST /ui/queues/{queue}/requeue", h.action(h.requeue))
	m.Handle("POST /ui/queues/{queue}/purge", h.action(h.purge))
	m.Handle("POST /ui/queues/{queue}/limits", h.action(h.setKeyLimits))
	m.Handle("POST /ui/queues/{queue}/limits/reset", h.action(h.resetKeyLimits))

	m.HandleFunc("/ui/", h.notFound)
}

// ServeHTTP implements http.Handler: the security headers, the API's
// browser guard, then the route.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	securityHeaders(w.Header())
	if err := h.opts.API.Guard(r); err != nil {
		h.fail(w, r, nil, &pageError{status: http.StatusForbidden, msg: messageOf(err)})
		return
	}
	h.mux.ServeHTTP(w, r)
}

// securityHeaders are set on every response.
func securityHeaders(hdr http.Header) {
	hdr.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "same-origin")
	hdr.Set("X-Frame-Options", "DENY")
}

// backend returns the client the pages read through, or errNoBackend.
func (h *Handler) backend() (Backend, error) {
	b := h.opts.Backend()
	if b == nil {
		return nil, errNoBackend
	}
	return b, nil
}

// Disabled returns the handler of a UI that is not served: a small page
// saying reason, with status 404. The daemon mounts it when the API, which
// the UI logs in with, is not served.
func Disabled(reason string) http.Handler {
	t, err := parseDisabled()
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		securityHeaders(w.Header())
		w.Header().Set("Cache-Control", "no-store")
		if err != nil {
			http.Error(w, "The web UI is not served: "+reason, http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		_ = t.Execute(w, reason) // the client may be gone; nothing to do then
	})
}
