package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/wire"
	"github.com/seed-53d105c9/courier/worker"
)

// token is an accepted token as the handler keeps it: the digest of its
// secret, never the secret.
type token struct {
	name   string
	role   Role
	queues []string // sorted; nil for every queue
	digest [sha256.Size]byte
}

// identity is who sent a request.
type identity struct {
	name   string // token name; anonymous without authentication; "" before it
	role   Role
	queues []string // the token's, sorted; nil for every queue
}

func newTokens(in []Token, insecure bool) ([]token, error) {
	switch {
	case insecure && len(in) > 0:
		return nil, fmt.Errorf("api: InsecureNoAuth and Tokens are exclusive")
	case !insecure && len(in) == 0:
		return nil, fmt.Errorf("api: no token configured (set InsecureNoAuth for an open API)")
	}
	out := make([]token, 0, len(in))
	names := map[string]bool{}
	for i, t := range in {
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("api: token %d has no name", i)
		case names[t.Name]:
			return nil, fmt.Errorf("api: token name %q is used twice", t.Name)
		case t.Secret == "":
			// No request can present an empty token (authenticate
			// refuses it), so this is a mistake, not a weak token.
			return nil, fmt.Errorf("api: token %q has no secret", t.Name)
		case t.Role != RoleProducer && t.Role != RoleAdmin:
			return nil, fmt.Errorf("api: token %q has role %q; want producer or admin", t.Name, t.Role)
		}
		queues, err := tokenQueues(t)
		if err != nil {
			return nil, err
		}
		names[t.Name] = true
		out = append(out, token{name: t.Name, role: t.Role, queues: queues, digest: sha256.Sum256([]byte(t.Secret))})
	}
	return out, nil
}

// tokenQueues checks t's queues and returns them sorted; nil for every
// queue.
func tokenQueues(t Token) ([]string, error) {
	if len(t.Queues) == 0 {
		return nil, nil
	}
	queues := slices.Sorted(slices.Values(t.Queues))
	for i, q := range queues {
		if err := worker.ValidateQueueName(q); err != nil {
			return nil, fmt.Errorf("api: token %q: %w", t.Name, err)
		}
		if i > 0 && queues[i-1] == q {
			return nil, fmt.Errorf("api: token %q lists queue %q twice", t.Name, q)
		}
	}
	return queues, nil
}

// authenticate finds the token a request to route ("" for none) carries.
// A request that presents a wrong credential (a malformed Authorization
// header or an unknown token) is counted, logged and spends a failure of
// its address (failures.go); one that presents none is counted only: any
// web page can make a browser send such requests (an <img> pointing at
// the API), so they must not lock its address out.
func (h *Handler) authenticate(r *http.Request, route string) (identity, *Error) {
	id, reason, err := h.identify(r)
	switch {
	case err == nil:
	case reason == failMissing:
		h.metrics.failures.WithLabelValues(failMissing).Inc()
	default:
		err = h.failed(r, route, reason, err)
	}
	return id, err
}

// identify finds the token a request carries, or says why there is none
// (reason: failMissing or failInvalid). A request the web UI serves on a
// principal's behalf (ServeAs) carries the principal instead.
func (h *Handler) identify(r *http.Request) (id identity, reason string, err *Error) {
	if p, ok := r.Context().Value(principalKey{}).(Principal); ok {
		return p.identity(), "", nil
	}
	if len(h.tokens) == 0 {
		return identity{name: anonymous, role: RoleAdmin}, "", nil
	}
	unauthorized := func(reason, msg string) (identity, string, *Error) {
		return identity{}, reason, apiError(wire.CodeUnauthorized, "Authorization", msg)
	}
	values := r.Header.Values("Authorization")
	switch {
	case len(values) == 0:
		return unauthorized(failMissing, "missing token: send Authorization: Bearer <token>")
	case len(values) > 1:
		return unauthorized(failInvalid, "more than one Authorization header")
	}
	scheme, secret, ok := strings.Cut(values[0], " ")
	secret = strings.TrimLeft(secret, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return unauthorized(failInvalid, "the Authorization header must be Bearer <token>")
	}
	t := h.match(secret)
	if t == nil {
		return unauthorized(failInvalid, "invalid token")
	}
	return identity{name: t.name, role: t.role, queues: t.queues}, "", nil
}

// match returns the token whose secret is secret, or nil. Each configured
// token is compared, in constant time, with the digest of secret, and the
// loop does not stop at a match: the time taken says nothing about which
// token matched, or how much of one.
func (h *Handler) match(secret string) *token {
	digest := sha256.Sum256([]byte(secret))
	match := -1
	for i := range h.tokens {
		if subtle.ConstantTimeCompare(digest[:], h.tokens[i].digest[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return nil
	}
	return &h.tokens[match]
}

// allows is the one rule of what a token may do, asked by every API
// request (run) and by every page of the web UI (Handler.Permit): the
// route's role, then the queue the token is limited to ("" for a route
// without one).
func (id identity) allows(rt route, queue string) *Error {
	if err := id.may(rt); err != nil {
		return err
	}
	return id.mayUse(queue)
}

// may refuses a producer an admin route.
func (id identity) may(rt route) *Error {
	if rt.role == RoleAdmin && id.role != RoleAdmin {
		return apiError(wire.CodeForbidden, "Authorization",
			fmt.Sprintf("token %q has the %s role; %s %s needs admin", id.name, id.role, rt.method, rt.path))
	}
	return nil
}

// mayUse refuses a token limited to other queues the route's queue (""
// for a route without one).
func (id identity) mayUse(queue string) *Error {
	if queue == "" || id.sees(queue) {
		return nil
	}
	return apiError(wire.CodeForbidden, "queue", fmt.Sprintf("token %q may not use queue %q (it is limited to %s)",
		id.name, queue, strings.Join(id.queues, ", ")))
}

// sees reports whether the token may see queue.
func (id identity) sees(queue string) bool {
	if id.queues == nil {
		return true
	}
	_, found := slices.BinarySearch(id.queues, queue)
	return found
}

// limit spends one request of id's rate limit.
func (h *Handler) limit(id identity, now time.Time) *Error {
	if h.limiter == nil {
		return nil
	}
	spent, wait := h.limiter.take(id.name, now)
	if spent {
		return nil
	}
	e := apiError(wire.CodeRateLimited, "", fmt.Sprintf("token %q is over its rate limit of %s; retry in %s",
		id.name, h.opts.RateLimit, wait.Round(time.Millisecond)))
	e.retryAfter = wait
	return e
}
