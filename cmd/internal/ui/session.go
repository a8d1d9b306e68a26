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
	"time"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
)

// sessionCookie is the session's cookie; its value is
// base64url(payload) "." base64url(principal.Sign(payload)), where payload
// is "v1|<token name>|<expiry, Unix seconds>|<nonce, 32 hex digits>".
const (
	sessionCookie  = "courier_session"
	sessionVersion = "v1"
)

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
// that token's MAC, has not expired and was not logged out. When whether
// it was logged out cannot be told (Redis unavailable), it fails closed:
// the error is errSessionUnchecked, a 503 page.
func (h *Handler) readSession(r *http.Request) (*session, error) {
	c, err := readCookie(r, sessionCookie)
	if err != nil {
		return nil, nil
	}
	enc, encMAC, ok := strings.Cut(c.Value, ".")
	if !ok {
		return nil, nil
	}
	payload, err1 := b64.DecodeString(enc)
	mac, err2 := b64.DecodeString(encMAC)
	if err1 != nil || err2 != nil {
		return nil, nil
	}
	name, expiry, nonce, ok := parsePayload(string(payload))
	if !ok {
		return nil, nil
	}
	p, ok := h.opts.API.Lookup(name)
	if !ok || !hmac.Equal(mac, p.Sign(payload)) {
		return nil, nil
	}
	s := &session{p: p, nonce: nonce, expires: time.Unix(expiry, 0)}
	if !h.now().Before(s.expires) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), revocationTimeout)
	defer cancel()
	revoked, err := h.opts.Revocations.Revoked(ctx, nonce)
	if err != nil {
		h.log.Warn("ui: the session's log-out could not be checked; refusing it", "path", r.URL.Path, "err", err)
		return nil, errSessionUnchecked
	}
	if revoked {
		return nil, nil
	}
	return s, nil
}

// revocationTimeout bounds the check of a session, and the record of a
// log-out, in Redis.
const revocationTimeout = 5 * time.Second

// errSessionUnchecked: Redis could not say whether the session was logged
// out, so it is not taken (fail closed).
var errSessionUnchecked = &pageError{status: http.StatusServiceUnavailable, retryAfter: 2,
	msg: "Your session cannot be checked: Redis, where log-outs are kept, is unavailable. Nothing was done; retry shortly."}

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

// endSession logs s out: its nonce is refused, by every daemon sharing
// the Redis, until it would have expired, and the cookie is cleared. If
// the log-out cannot be recorded, the cookie is kept (the session is
// still valid elsewhere) and the error says so.
func (h *Handler) endSession(w http.ResponseWriter, r *http.Request, s *session) error {
	ctx, cancel := context.WithTimeout(r.Context(), revocationTimeout)
	defer cancel()
	if err := h.opts.Revocations.Revoke(ctx, s.nonce, s.expires.Sub(h.now())); err != nil {
		h.log.Warn("ui: log-out not recorded", "err", err)
		return &pageError{status: http.StatusServiceUnavailable, retryAfter: 2,
			msg: "The log-out could not be recorded: Redis, where log-outs are kept, is unavailable. You are still logged in; retry shortly."}
	}
	setCookie(w, r, sessionCookie, "", -1)
	return nil
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
		s, err := h.sessionOf(w, r)
		if err != nil {
			h.fail(w, r, nil, err)
			return
		}
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
// an anonymous session. The error is readSession's.
func (h *Handler) sessionOf(w http.ResponseWriter, r *http.Request) (*session, error) {
	s, err := h.readSession(r)
	if s != nil || err != nil {
		return s, err
	}
	if h.opts.API.Open() {
		if p, ok := h.opts.API.Lookup(api.Anonymous); ok {
			return h.newSession(w, r, p), nil
		}
	}
	return nil, nil
}
