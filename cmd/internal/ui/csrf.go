package ui

import (
	"crypto/hmac"
	"errors"
	"net/http"
)

// maxFormBytes bounds a form's body: an enqueue's payload, URL-encoded,
// is the largest field. Larger payloads go through the API or the CLI.
const maxFormBytes = 8 << 20

// csrfToken is the CSRF token of s's forms: base64url of the principal's
// MAC of "csrf|<nonce>", so bound to the session.
func csrfToken(s *session) string {
	return b64.EncodeToString(s.p.Sign([]byte("csrf|" + s.nonce)))
}

// validCSRF reports whether got is s's CSRF token.
func validCSRF(s *session, got string) bool {
	mac, err := b64.DecodeString(got)
	return err == nil && got != "" && hmac.Equal(mac, s.p.Sign([]byte("csrf|"+s.nonce)))
}

// pageFunc serves a request of a session.
type pageFunc func(w http.ResponseWriter, r *http.Request, s *session) error

// action serves the POST forms. Nothing is done unless the request passes
// the cross-origin check, has a valid session and carries its CSRF token.
func (h *Handler) action(fn pageFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if err := h.origin.Check(r); err != nil {
			h.fail(w, r, nil, &pageError{status: http.StatusForbidden,
				msg: "Cross-origin request refused (" + err.Error() + "): nothing was changed."})
			return
		}
		s, err := h.sessionOf(w, r)
		if err != nil {
			h.fail(w, r, nil, err)
			return
		}
		if s == nil {
			h.fail(w, r, nil, &pageError{status: http.StatusUnauthorized, login: true,
				msg: "You are not logged in, or your session has ended: nothing was changed. Log in and try again."})
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		if err := r.ParseForm(); err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				h.fail(w, r, s, &pageError{status: http.StatusRequestEntityTooLarge,
					msg: "The form is larger than 8 MiB: nothing was changed. Enqueue large payloads through the API or the CLI."})
				return
			}
			h.fail(w, r, s, &pageError{status: http.StatusBadRequest, msg: "The form could not be read: " + err.Error()})
			return
		}
		if !validCSRF(s, r.PostFormValue("csrf")) {
			h.fail(w, r, s, &pageError{status: http.StatusForbidden,
				msg: "The form's security token (CSRF) is missing or belongs to another session: nothing was changed. Reload the page and try again."})
			return
		}
		if err := fn(w, r, s); err != nil {
			h.fail(w, r, s, err)
		}
	})
}
