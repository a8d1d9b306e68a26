package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// token is an accepted token as the handler keeps it: the digest of its
// secret, never the secret.
type token struct {
	name   string
	role   Role
	digest [sha256.Size]byte
}

// identity is who sent a request.
type identity struct {
	name string // token name; "anonymous" without authentication; "" before it
	role Role
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
		case len(t.Secret) < MinTokenLen:
			return nil, fmt.Errorf("api: token %q is shorter than %d bytes", t.Name, MinTokenLen)
		case t.Role != RoleProducer && t.Role != RoleAdmin:
			return nil, fmt.Errorf("api: token %q has role %q; want producer or admin", t.Name, t.Role)
		}
		names[t.Name] = true
		out = append(out, token{name: t.Name, role: t.Role, digest: sha256.Sum256([]byte(t.Secret))})
	}
	return out, nil
}

// authenticate finds the token a request carries. Each configured token is
// compared, in constant time, with the digest of the one presented, and
// the loop does not stop at a match: the time taken says nothing about
// which token matched, or how much of one.
func (h *Handler) authenticate(r *http.Request) (identity, *Error) {
	if len(h.tokens) == 0 {
		return identity{name: "anonymous", role: RoleAdmin}, nil
	}
	unauthorized := func(msg string) (identity, *Error) {
		return identity{}, apiError(CodeUnauthorized, "Authorization", msg)
	}
	values := r.Header.Values("Authorization")
	switch {
	case len(values) == 0:
		return unauthorized("missing token: send Authorization: Bearer <token>")
	case len(values) > 1:
		return unauthorized("more than one Authorization header")
	}
	scheme, secret, ok := strings.Cut(values[0], " ")
	secret = strings.TrimLeft(secret, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return unauthorized("the Authorization header must be Bearer <token>")
	}
	digest := sha256.Sum256([]byte(secret))
	match := -1
	for i := range h.tokens {
		if subtle.ConstantTimeCompare(digest[:], h.tokens[i].digest[:]) == 1 {
			match = i
		}
	}
	if match < 0 {
		return unauthorized("invalid token")
	}
	return identity{name: h.tokens[match].name, role: h.tokens[match].role}, nil
}

// may refuses a producer an admin route.
func (id identity) may(rt route) *Error {
	if rt.role == RoleAdmin && id.role != RoleAdmin {
		return apiError(CodeForbidden, "Authorization",
			fmt.Sprintf("token %q has the %s role; %s %s needs admin", id.name, id.role, rt.method, rt.path))
	}
	return nil
}

// limit spends one request of id's rate limit.
func (h *Handler) limit(id identity, now time.Time) *Error {
	if h.limiter == nil {
		return nil
	}
	wait := h.limiter.take(id.name, now)
	if wait <= 0 {
		return nil
	}
	e := apiError(CodeRateLimited, "", fmt.Sprintf("token %q is over its rate limit of %s; retry in %s",
		id.name, h.opts.RateLimit, wait.Round(time.Millisecond)))
	e.retryAfter = wait
	return e
}
