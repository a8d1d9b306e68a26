package ui

import (
	"errors"
	"net/http"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/cmd/internal/wire"
)

// loginView is the data of the login page.
type loginView struct {
	Next    string
	Error   string
	Message string
}

// loginPage serves GET /ui/login. Without authentication there is nothing
// to log in to: it redirects to the overview.
func (h *Handler) loginPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	next := safeNext(r.URL.Query().Get("next"))
	if h.opts.API.Open() {
		seeOther(w, r, "/ui/")
		return
	}
	data := loginView{Next: next}
	if r.URL.Query().Get("out") == "1" {
		data.Message = "You have logged out."
	}
	h.render(w, r, nil, http.StatusOK, "login", "Log in", "", data)
}

// login serves POST /ui/login: the token's secret goes to API.Login
// (which counts a wrong one against the client's address); a right one
// starts a session and goes on to next.
func (h *Handler) login(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	if err := h.origin.Check(r); err != nil {
		h.fail(w, r, nil, &pageError{status: http.StatusForbidden, msg: "Cross-origin login refused (" + err.Error() + ")."})
		return
	}
	if h.opts.API.Open() {
		seeOther(w, r, "/ui/")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		h.fail(w, r, nil, &pageError{status: http.StatusBadRequest, msg: "The form could not be read: " + err.Error()})
		return
	}
	next := safeNext(r.PostFormValue("next"))
	p, err := h.opts.API.Login(r, r.PostFormValue("token"))
	if err != nil {
		status := http.StatusUnauthorized
		var e *api.Error
		if errors.As(err, &e) && e.Code == wire.CodeRateLimited {
			status = http.StatusTooManyRequests
		}
		h.render(w, r, nil, status, "login", "Log in", "", loginView{Next: next, Error: messageOf(err)})
		return
	}
	h.newSession(w, r, p)
	if next == "" {
		next = "/ui/"
	}
	seeOther(w, r, next)
}

// logout serves POST /ui/logout: the session is revoked, fleet-wide (in
// Redis), and its cookie cleared.
func (h *Handler) logout(w http.ResponseWriter, r *http.Request, s *session) error {
	if err := h.endSession(w, r, s); err != nil {
		return err
	}
	if h.opts.API.Open() {
		seeOther(w, r, "/ui/")
		return nil
	}
	seeOther(w, r, "/ui/login?out=1")
	return nil
}
