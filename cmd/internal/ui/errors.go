package ui

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/seed-53d105c9/courier/cmd/internal/api"
	"github.com/seed-53d105c9/courier/worker"
)

// pageError is a request's failure as a page shows it: a status and a
// message for the operator.
type pageError struct {
	status int
	msg    string
	// retryAfter, in seconds, is sent with a 503.
	retryAfter int
	// login offers a link to the login page.
	login bool
}

func (e *pageError) Error() string { return e.msg }

// errNoBackend: the daemon has not reached Redis yet.
var errNoBackend = &pageError{status: http.StatusServiceUnavailable, retryAfter: 2,
	msg: "Redis has not been reached yet; the page will work once it has. Retry shortly."}

// errorPage is the data of the error page.
type errorPage struct {
	Status  int
	Message string
	Login   string // the login page's URL, when offered
}

// fail answers a request that failed with err (s is nil before a session
// is known): pageErrors as they say; Redis that cannot serve is 503 with
// Retry-After, a missing job 404, a bad argument 400; anything else is
// logged and answered 500 with a generic message.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, s *session, err error) {
	if r.Context().Err() != nil {
		return // the client left; nobody reads the reply
	}
	pe := h.classify(r, err)
	if pe.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(pe.retryAfter))
	}
	data := errorPage{Status: pe.status, Message: pe.msg}
	if pe.login {
		data.Login = loginURL("")
	}
	h.render(w, r, s, pe.status, "error", http.StatusText(pe.status), "", data)
}

// classify maps err to what the error page says.
func (h *Handler) classify(r *http.Request, err error) *pageError {
	var pe *pageError
	var ve *worker.ValidationError
	switch {
	case errors.As(err, &pe):
		return pe
	case errors.Is(err, worker.ErrRedisOOM):
		return &pageError{status: http.StatusServiceUnavailable, retryAfter: 10, msg: "Redis is unavailable: it is out of memory."}
	case errors.Is(err, context.DeadlineExceeded) && worker.IsRedisUnavailable(err):
		return &pageError{status: http.StatusServiceUnavailable, retryAfter: 1, msg: "Redis is unavailable: it did not answer in time."}
	case worker.IsRedisUnavailable(err):
		// The error's text may name Redis's address: it goes to the log.
		h.log.Warn("ui page: Redis is unavailable", "path", r.URL.Path, "err", err)
		return &pageError{status: http.StatusServiceUnavailable, retryAfter: 2,
			msg: "Redis is unavailable: it is not reachable, loading or failing over. Retry shortly."}
	case errors.Is(err, worker.ErrNotFound):
		return &pageError{status: http.StatusNotFound, msg: err.Error()}
	case errors.As(err, &ve):
		return &pageError{status: http.StatusBadRequest, msg: err.Error()}
	}
	h.log.Error("ui page failed", "method", r.Method, "path", r.URL.Path, "err", err)
	return &pageError{status: http.StatusInternalServerError, msg: "Internal error; the server logged it."}
}

// notFound answers a path that has no page.
func (h *Handler) notFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	s, _ := h.readSession(r) // only for the page's frame: without a session it has none
	h.fail(w, r, s, &pageError{status: http.StatusNotFound, msg: "There is no page " + r.URL.Path + "."})
}

// messageOf is the message of an API error (an *api.Error), or err's text.
func messageOf(err error) string {
	var e *api.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}
