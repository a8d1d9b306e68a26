package ui

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/seed-53d105c9/courier/internal/api"
)

// sessionCookie is the session's cookie; its value is
// base64url(payload) "." base64url(principal.Sign(payload)), where payload
// is "v1|<token name>|<expiry, Unix seconds>|<nonce, 32 hex digits>".
const (
	sessionCookie  = "courier_session"
	sessionVersion = "v1"
	cookiePath     = "/ui/"
)

// maxRevoked bounds the nonces of logged-out sessions kept until they
// expire.
const maxRevoked = 100_000

// session is a request's valid session.
type session struct {
	p       api.Principal
	nonce   string
	expires time.Time
}

// b64 is the cookies' and CSRF tokens' encoding.
var b64 = base64.RawURLEncoding

// newSession starts a session of p and sets its cookie on w.
func (h *Handler) newSession(w http.ResponseWriter, r *http.Request, p api.Principal) *session {
	var n [16]byte
	_, _ = rand.Read(n[:]) // crypto/rand.Read never fails (Go 1.24+)
	s := &session{p: p, nonce: hex.EncodeToString(n[:]), expires: h.now().Add(h.opts.SessionTTL).Truncate(time.Second)}
	payload := strings.Join([]string{sessionVersion, p.Name, strconv.FormatInt(s.expires.Unix(), 10), s.nonce}, "|")
	value := b64.EncodeToString([]byte(payload)) + "." + b64.EncodeToString(p.Sign([]byte(payload)))
	setCookie(w, r, sessionCookie, value, int(h.opts.SessionTTL/time.Second))
	return s
}

// readSession returns the request's session, or nil when it has none that
// is valid: a cookie that decodes, names a token that still exists, has
// that token's MAC, has not expired and was not logged out.
func (h *Handler) readSession(r *http.Request) *session {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil
	}
	enc, encMAC, ok := strings.Cut(c.Value, ".")
	if !ok {
		return nil
	}
	payload, err1 := b64.DecodeString(enc)
	mac, err2 := b64.DecodeString(encMAC)
	if err1 != nil || err2 != nil {
		return nil
	}
	name, expiry, nonce, ok := parsePayload(string(payload))
	if !ok {
		return nil
	}
	p, ok := h.opts.API.Lookup(name)
	if !ok || !hmac.Equal(mac, p.Sign(payload)) {
		return nil
	}
	s := &session{p: p, nonce: nonce, expires: time.Unix(expiry, 0)}
	if !h.now().Before(s.expires) || h.revoked.has(nonce) {
		return nil
	}
	return s
}

// parsePayload splits a session's payload. The name comes between the
// version and the last two fields, so a token name holding "|" still
// parses.
func parsePayload(payload string) (name string, expiry int64, nonce string, ok bool) {
	rest, ok := strings.CutPrefix(payload, sessionVersion+"|")
	if !ok {
		return "", 0, "", false
	}
	i := strings.LastIndexByte(rest, '|')
	if i < 0 {
		return "", 0, "", false
	}
	rest, nonce = rest[:i], rest[i+1:]
	j := strings.LastIndexByte(rest, '|')
	if j < 0 || len(nonce) != 32 {
		return "", 0, "", false
	}
	expiry, err := strconv.ParseInt(rest[j+1:], 10, 64)
	if err != nil {
		return "", 0, "", false
	}
	return rest[:j], expiry, nonce, true
}

// endSession logs s out: its nonce is refused until it would have
// expired, and the cookie is cleared.
func (h *Handler) endSession(w http.ResponseWriter, r *http.Request, s *session) {
	h.revoked.add(s.nonce, s.expires, h.now())
	setCookie(w, r, sessionCookie, "", -1)
}

// setCookie sets a cookie of the UI: HttpOnly, SameSite=Strict, on
// /ui/, Secure over TLS. maxAge -1 deletes it.
func setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	// #nosec G124 -- Secure whenever the UI is served over TLS; over plain
	// HTTP (loopback, courier dev) a Secure cookie would never come back.
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: cookiePath, MaxAge: maxAge,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteStrictMode,
	})
}

// revocations are the nonces of sessions logged out here, each kept until
// its session would have expired.
type revocations struct {
	mu    sync.Mutex
	until map[string]time.Time
	max   int
}

func newRevocations(limit int) *revocations {
	return &revocations{until: make(map[string]time.Time), max: limit}
}

// add revokes nonce until expires. Expired entries are pruned once the map
// is full; if it is still full, the entry that expires first makes room.
func (rv *revocations) add(nonce string, expires, now time.Time) {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	if len(rv.until) >= rv.max {
		var first string
		for n, t := range rv.until {
			if !now.Before(t) {
				delete(rv.until, n)
			} else if first == "" || t.Before(rv.until[first]) {
				first = n
			}
		}
		if len(rv.until) >= rv.max {
			delete(rv.until, first)
		}
	}
	rv.until[nonce] = expires
}

// has reports whether nonce was revoked.
func (rv *revocations) has(nonce string) bool {
	rv.mu.Lock()
	defer rv.mu.Unlock()
	_, ok := rv.until[nonce]
	return ok
}

// pageTimeout bounds the Redis reads of a page: a Redis that does not
// answer gets a 503 page rather than a browser left waiting.
const pageTimeout = 10 * time.Second

// page serves the GET pages: a request without a valid session is sent to
// the login page (in open mode, given an anonymous session instead); one
// whose principal the API would refuse route ("" for none: the page
// shows each principal what it may see) gets the API's refusal as a 403
// page.
func (h *Handler) page(route string, fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		s := h.sessionOf(w, r)
		if s == nil {
			seeOther(w, r, loginURL(r.URL.RequestURI()))
			return
		}
		if err := h.pagePermit(r, s, route); err != nil {
			h.fail(w, r, s, err)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), pageTimeout)
		defer cancel()
		if err := fn(w, r.WithContext(ctx), s); err != nil {
			h.fail(w, r, s, err)
		}
	})
}

// sessionOf returns r's session; in open mode a request without one gets
// an anonymous session.
func (h *Handler) sessionOf(w http.ResponseWriter, r *http.Request) *session {
	if s := h.readSession(r); s != nil {
		return s
	}
	if h.opts.API.Open() {
		if p, ok := h.opts.API.Lookup(api.Anonymous); ok {
			return h.newSession(w, r, p)
		}
	}
	return nil
}
