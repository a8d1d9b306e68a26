package api

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"net/http"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// The web UI (package ui) signs in with the API's tokens and acts through
// the API's routes: a form that logs in presents a token's secret to
// Login, the session names the token, and each action is an API request
// that ServeAs serves on the principal's behalf. The roles, the queues a
// token is limited to, the rate limit, the validation and the replies are
// then the API's own: one code path for every surface.

// anonymous is the name of every caller of an API without authentication.
const anonymous = "anonymous"

// Principal is who a token is: its name, its role and the queues it is
// limited to. The web UI keeps it for a session.
type Principal struct {
	Name string
	Role Role
	// Queues limits the principal to these queues, sorted; nil means
	// every queue.
	Queues []string
	// key signs the principal's sessions: derived from the token's digest,
	// so that a session ends when its token is removed or changed.
	key [sha256.Size]byte
}

// principalKey carries a Principal in a request served by ServeAs.
type principalKey struct{}

// Sees reports whether p may see queue.
func (p Principal) Sees(queue string) bool {
	return identity{queues: p.Queues}.sees(queue)
}

// identity is who a request served on p's behalf comes from.
func (p Principal) identity() identity {
	return identity{name: p.Name, role: p.Role, queues: p.Queues}
}

// Admin reports whether p has the admin role.
func (p Principal) Admin() bool { return p.Role == RoleAdmin }

// Sign returns the HMAC-SHA256 of msg under a key of p's own: a key
// derived from p's token, or, without authentication, one drawn when the
// Handler was made. A session signed with it ends when the token is
// removed or changed, or the open Handler is replaced.
func (p Principal) Sign(msg []byte) []byte {
	m := hmac.New(sha256.New, p.key[:])
	m.Write(msg)
	return m.Sum(nil)
}

// principal is t as a Principal.
func (t *token) principal() Principal {
	key := hmac.New(sha256.New, t.digest[:])
	key.Write([]byte("courier web UI session"))
	p := Principal{Name: t.name, Role: t.role, Queues: t.queues}
	copy(p.key[:], key.Sum(nil))
	return p
}

// Open reports whether the API serves without authentication
// (Options.InsecureNoAuth): every caller is the anonymous admin, and
// Lookup(Anonymous) returns it.
func (h *Handler) Open() bool { return len(h.tokens) == 0 }

// Anonymous is the principal's name of every caller of an open API.
const Anonymous = anonymous

// Login returns the principal of the token whose secret a login form
// presents. A wrong secret is a failed authentication of r's client
// address, as a wrong bearer token is: counted, logged, and spending the
// address's failures, so that once they are spent the address is
// throttled (Login then refuses without checking the secret). An empty
// form presents no credential, as a request without an Authorization
// header does not: it is refused and counted, but spends nothing. The
// error is an *Error (unauthorized, or rate_limited with a Retry-After).
func (h *Handler) Login(r *http.Request, secret string) (Principal, error) {
	if h.Open() {
		return h.anonymous, nil
	}
	if h.failures != nil {
		if addr := clientAddr(r); addr.IsValid() {
			if wait := h.failures.wait(clientKey(addr), h.now()); wait > 0 {
				h.metrics.failures.WithLabelValues(failThrottled).Inc()
				return Principal{}, throttledError(wait)
			}
		}
	}
	if secret == "" {
		h.metrics.failures.WithLabelValues(failMissing).Inc()
		return Principal{}, apiError(wire.CodeUnauthorized, "token", "enter a token")
	}
	t := h.match(secret)
	if t == nil {
		return Principal{}, h.failed(r, "login", failInvalid, apiError(wire.CodeUnauthorized, "token", "invalid token"))
	}
	return t.principal(), nil
}

// Lookup returns the principal of the token named name, as configured
// now: a session names its token, and ends when no token has the name.
func (h *Handler) Lookup(name string) (Principal, bool) {
	if h.Open() {
		return h.anonymous, name == anonymous
	}
	for i := range h.tokens {
		if h.tokens[i].name == name {
			return h.tokens[i].principal(), true
		}
	}
	return Principal{}, false
}

// ServeAs serves r, a request of the API (a method and a path under
// /v1/), on p's behalf: as a request carrying p's token would be served,
// through the same route, role and queue checks, rate limit, validation
// and reply; its Authorization header is ignored. The web UI's actions go
// through it. p must come from Login or Lookup. Unlike ServeHTTP it does
// not check the request's origin: the caller has (the UI checks its own
// CSRF token).
func (h *Handler) ServeAs(w http.ResponseWriter, r *http.Request, p Principal) {
	r = r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
	h.mux.ServeHTTP(w, r)
}

// Permit returns nil when p may call the API's route ("METHOD /path" as
// the API declares it, e.g. "GET /v1/queues/{queue}") on queue ("" for a
// route without one), else the refusal the API would answer (an *Error,
// forbidden): the one rule of roles and queue limits, which every API
// request passes, asked by each page of the web UI for the route whose
// data it shows. A route the API does not have is an error too (a
// mistake of the caller's, which its tests find).
func (h *Handler) Permit(p Principal, route, queue string) error {
	rt, ok := h.byName[route]
	if !ok {
		return fmt.Errorf("api: Permit: no route %q", route)
	}
	if rt.role == "" {
		return nil
	}
	if e := p.identity().allows(rt, queue); e != nil {
		return e
	}
	return nil
}

// Guard returns the refusal of a request a browser was tricked into
// (see browserGuard): a cross-origin write, and, without
// authentication, a Host that a web page may have rebound to this
// address. The web UI calls it on each of its requests; ServeHTTP does
// it for the API's. The error is an *Error (forbidden).
func (h *Handler) Guard(r *http.Request) error {
	if e := h.browser.refuse(r); e != nil {
		return e
	}
	return nil
}

// newAnonymous returns the principal of an open API, with a key of its
// own.
func newAnonymous() Principal {
	p := Principal{Name: anonymous, Role: RoleAdmin}
	_, _ = rand.Read(p.key[:]) // crypto/rand.Read never fails (Go 1.24+)
	return p
}
