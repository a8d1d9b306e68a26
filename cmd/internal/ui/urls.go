package ui

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/seed-53d105c9/courier/worker"
)

// queueURL is the page of queue.
func queueURL(queue string) string { return "/ui/queues/" + url.PathEscape(queue) }

// jobURL is the page of job id of queue.
func jobURL(queue, id string) string { return queueURL(queue) + "/jobs/" + url.PathEscape(id) }

// keysURL is the page of queue's job keys.
func keysURL(queue string) string { return queueURL(queue) + "/keys" }

// keyURL is the page of job key key of queue.
func keyURL(queue, key string) string { return keysURL(queue) + "/" + url.PathEscape(key) }

// tabURL is the page of queue's jobs in state, from cursor ("" for the
// first page), of the dead jobs whose error contains errText.
func tabURL(queue, state, cursor, errText string) string {
	q := url.Values{}
	if state != "" {
		q.Set("state", state)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if errText != "" {
		q.Set("error", errText)
	}
	if len(q) == 0 {
		return queueURL(queue)
	}
	return queueURL(queue) + "?" + q.Encode()
}

// loginURL is the login page, which sends the operator on to next once
// logged in.
func loginURL(next string) string {
	if next = safeNext(next); next == "" || next == "/ui/" {
		return "/ui/login"
	}
	return "/ui/login?" + url.Values{"next": {next}}.Encode()
}

// safeNext returns next when it is a path of the UI on this site (so that
// a link cannot send a logged-in operator elsewhere), else "".
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/ui/") || strings.HasPrefix(next, "/ui/login") || strings.ContainsAny(next, "\\\r\n\t") {
		return ""
	}
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || !strings.HasPrefix(u.Path, "/ui/") {
		return ""
	}
	return next
}

// queueName returns the path's queue name, checked as the API checks it.
func queueName(r *http.Request) (string, error) {
	q := r.PathValue("queue")
	if err := worker.ValidateQueueName(q); err != nil {
		return "", &pageError{status: http.StatusBadRequest, msg: err.Error()}
	}
	return q, nil
}

// seeOther redirects the browser, after a POST or to another page, to
// path: a path of the UI's own, built by the functions of this file or
// checked by safeNext, never another site.
func seeOther(w http.ResponseWriter, r *http.Request, path string) {
	if !strings.HasPrefix(path, "/ui/") || strings.HasPrefix(path, "//") {
		path = "/ui/"
	}
	http.Redirect(w, r, path, http.StatusSeeOther) // #nosec G710 -- a path under /ui/ of this origin (checked above)
}

// queueBackend returns the path's queue, checked as the API checks a
// name (the page's route was permitted on it, see page), and the client
// the page reads it through.
func (h *Handler) queueBackend(r *http.Request) (string, Backend, error) {
	queue, err := queueName(r)
	if err != nil {
		return "", nil, err
	}
	b, err := h.backend()
	if err != nil {
		return "", nil, err
	}
	return queue, b, nil
}
